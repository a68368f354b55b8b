package dashboard

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

// TestLiveViewEventNames keeps live.js speaking the server's event names:
// the names it spells are stream events of job's table, and the final
// ones, after which it loads the results, come from the page.
func TestLiveViewEventNames(t *testing.T) {
	js, err := staticFS.ReadFile("static/live.js")
	if err != nil {
		t.Fatal(err)
	}
	listened := regexp.MustCompile(`addEventListener\("([^"]+)"`).FindAllSubmatch(js, -1)
	if len(listened) == 0 {
		t.Fatal("live.js listens to no event by name")
	}
	stream := job.StreamEvents()
	for _, m := range listened {
		if name := string(m[1]); !slices.Contains(stream, name) {
			t.Errorf("live.js listens to %q, which is not one of job's stream events %q", name, stream)
		}
	}
	for _, name := range job.FinalEvents() {
		if bytes.Contains(js, []byte(`"`+name+`"`)) {
			t.Errorf("live.js spells the final event %q; it should read it from data-final-events", name)
		}
	}

	h, err := New(Config{API: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	d := jobData{Job: &job.Job{ID: "j1", Status: job.StatusRunning}, Active: true, Repeats: 1}
	if err := h.pages["job"].Execute(&page, d); err != nil {
		t.Fatalf("render job page: %v", err)
	}
	want := `data-final-events="` + strings.Join(job.FinalEvents(), " ") + `"`
	if !strings.Contains(page.String(), want) {
		t.Errorf("a running job's page lacks %s", want)
	}
}
