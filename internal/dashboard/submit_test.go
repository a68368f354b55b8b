package dashboard

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestInputFor: each field the API names lands next to the form input
// that filled it, the spec's targets[i] being the form's row rows[i].
func TestInputFor(t *testing.T) {
	rows := []int{0, 2} // rows 1 and 3 of the form were empty
	tests := []struct {
		field, stop, want string
	}{
		{"targets[0].url", "requests", "targets[0].url"},
		{"targets[1].url", "requests", "targets[2].url"},
		{"targets[1].name", "requests", "targets[2].name"},
		{"targets[1].url.host", "requests", "targets[2].url"},
		{"targets[5].url", "requests", ""},
		{"targets", "requests", "targets[0].url"},
		{"sweep.concurrency[1]", "requests", "sweep.concurrency"},
		{"sweep.requests", "requests", "sweep.requests"},
		{"sweep", "duration", "sweep.duration"},
		{"sweep.runs", "requests", "sweep.requests"},
		{"labels.env", "requests", "labels"},
		{"compare_to", "requests", ""},
	}
	for _, tt := range tests {
		if got := inputFor(tt.field, rows, tt.stop); got != tt.want {
			t.Errorf("inputFor(%q) = %q, want %q", tt.field, got, tt.want)
		}
	}
}

// TestFormSpec: the form becomes the spec a person would write, and an
// entry that is not a number is sent as typed for the API to name.
func TestFormSpec(t *testing.T) {
	f := specForm{Name: "n", Labels: "env:ci branch:main", Concurrency: "1, 4 x", Stop: "duration",
		Duration: "10s", Repeats: "3", KeepAlive: true, Baseline: "a"}
	f.TargetNames[0], f.TargetURLs[0] = "a", "http://127.0.0.1:1/"
	f.TargetURLs[2] = "http://127.0.0.1:2/"
	raw, rows := f.spec()
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "n", "labels": map[string]any{"env": "ci", "branch": "main"}, "baseline": "a",
		"targets": []any{map[string]any{"name": "a", "url": "http://127.0.0.1:1/"}, map[string]any{"url": "http://127.0.0.1:2/"}},
		"sweep":   map[string]any{"concurrency": []any{1.0, 4.0, "x"}, "duration": []any{"10s"}, "repeats": 3.0},
		"request": map[string]any{"keepalive": true},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(rows, []int{0, 2}) {
		t.Errorf("spec = %s rows %v, want %v rows [0 2]", raw, rows, want)
	}
}
