package job

import (
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
)

const testSHA = "9f2c1e7d5b3a4c6e8f0a1b2c3d4e5f60718293a4"

func TestValidateNotify(t *testing.T) {
	gh := func(mut func(*GitHubNotify)) *Notify {
		g := &GitHubNotify{Repository: "acme/shop", SHA: testSHA, PR: 12, Comment: CommentOnChange, Context: "benchq/checkout (main)"}
		mut(g)
		return &Notify{GitHub: g}
	}
	gl := func(mut func(*GitLabNotify)) *Notify {
		g := &GitLabNotify{Project: "acme/platform/shop", SHA: strings.Repeat("ab", 32), MergeRequest: 7}
		mut(g)
		return &Notify{GitLab: g}
	}
	tests := []struct {
		name   string
		notify *Notify
		want   []string
	}{
		{"github", gh(func(*GitHubNotify) {}), nil},
		{"gitlab", gl(func(*GitLabNotify) {}), nil},
		{"a push: no request", gh(func(g *GitHubNotify) { g.PR = 0 }), nil},
		{"no forge", &Notify{}, []string{"notify"}},
		{"repository without owner", gh(func(g *GitHubNotify) { g.Repository = "shop" }), []string{"notify.github.repository"}},
		{"repository with a group", gh(func(g *GitHubNotify) { g.Repository = "acme/platform/shop" }), []string{"notify.github.repository"}},
		{"repository '..'", gh(func(g *GitHubNotify) { g.Repository = "../.." }), []string{"notify.github.repository"}},
		{"project '.'", gl(func(g *GitLabNotify) { g.Project = "acme/./shop" }), []string{"notify.gitlab.project"}},
		{"query in repository", gh(func(g *GitHubNotify) { g.Repository = "acme/shop?x=1" }), []string{"notify.github.repository"}},
		{"short sha", gh(func(g *GitHubNotify) { g.SHA = "9f2c1e7" }), []string{"notify.github.sha"}},
		{"branch for sha", gl(func(g *GitLabNotify) { g.SHA = "main" }), []string{"notify.gitlab.sha"}},
		{"negative pr", gh(func(g *GitHubNotify) { g.PR = -1 }), []string{"notify.github.pr"}},
		{"negative merge request", gl(func(g *GitLabNotify) { g.MergeRequest = -3 }), []string{"notify.gitlab.merge_request"}},
		{"comment mode", gh(func(g *GitHubNotify) { g.Comment = "sometimes" }), []string{"notify.github.comment"}},
		{"context closing the marker", gh(func(g *GitHubNotify) { g.Context = "x -->" }), []string{"notify.github.context"}},
		{"long context", gh(func(g *GitHubNotify) { g.Context = strings.Repeat("x", 101) }), []string{"notify.github.context"}},
		{"every field at once", gh(func(g *GitHubNotify) { *g = GitHubNotify{Repository: "x", SHA: "y", PR: -1, Comment: "z"} }),
			[]string{"notify.github.repository", "notify.github.sha", "notify.github.pr", "notify.github.comment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			s.Notify = tt.notify
			err := s.Validate(DefaultLimits(), testservers.LoopbackOnly)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want problems with %v", tt.want)
			}
			if diff := cmp.Diff(tt.want, fields(t, err)); diff != "" {
				t.Errorf("problem fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeNotify: a notify in a spec's JSON decodes strictly, a wrong
// type named by its path.
func TestDecodeNotify(t *testing.T) {
	body := `{"targets":[{"url":"http://127.0.0.1:1/"}],"notify":{"github":{"repository":"acme/shop","sha":"` + testSHA + `","pr":12,"comment":"always"}}}`
	s, err := Decode(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Notify.GitHub; g == nil || g.PR != 12 || g.Comment != CommentAlways || g.SHA != testSHA {
		t.Errorf("decoded notify = %+v", s.Notify)
	}
	_, err = Decode(strings.NewReader(`{"targets":[{"url":"http://127.0.0.1:1/"}],"notify":{"github":{"repository":"acme/shop","pr":"12"}}}`))
	if diff := cmp.Diff([]string{"notify.github.pr"}, fields(t, err)); diff != "" {
		t.Errorf("problem fields (-want +got):\n%s", diff)
	}
}

func TestNotifyOver(t *testing.T) {
	template := &Notify{GitHub: &GitHubNotify{Comment: CommentNever, Context: "benchq/custom"},
		GitLab: &GitLabNotify{Project: "acme/mirror", SHA: testSHA}}
	event := &Notify{GitHub: &GitHubNotify{Repository: "acme/shop", SHA: testSHA, PR: 12}}
	got := event.Over(template)
	want := &Notify{GitHub: &GitHubNotify{Repository: "acme/shop", SHA: testSHA, PR: 12, Comment: CommentNever, Context: "benchq/custom"},
		GitLab: &GitLabNotify{Project: "acme/mirror", SHA: testSHA}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Over (-want +got):\n%s", diff)
	}
	if got := (*Notify)(nil).Over(template); got != template {
		t.Errorf("nil.Over(template) = %+v, want the template's", got)
	}
	if got := event.Over(nil); !cmp.Equal(got, event) {
		t.Errorf("event.Over(nil) = %+v, want the event's", got)
	}
}

func TestNotifyContext(t *testing.T) {
	tests := []struct {
		given  string
		labels map[string]string
		name   string
		want   string
	}{
		{"benchq/mine", map[string]string{LabelTemplate: "t"}, "n", "benchq/mine"},
		{"", map[string]string{LabelTemplate: "checkout-main"}, "n", "benchq/checkout-main"},
		{"", nil, "nightly run", "benchq/nightly run"},
		{"", nil, "", "benchq/job"},
		{"", nil, "a <b>", "benchq/job"}, // a name the marker cannot carry
	}
	for _, tt := range tests {
		s := Spec{Name: tt.name, Labels: tt.labels}
		if got := s.NotifyContext(tt.given); got != tt.want {
			t.Errorf("NotifyContext(%q) of %q %v = %q, want %q", tt.given, tt.name, tt.labels, got, tt.want)
		}
	}
}
