package forge

import (
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/job"
)

func notifiedJob(status job.Status, verdict string, notify *job.Notify) *job.Job {
	return &job.Job{
		ID: "01JC3W9Q5V1ZK2M4N6P8R0T2V4", Status: status, Verdict: verdict,
		Spec: job.Spec{Name: "nightly", Labels: map[string]string{job.LabelTemplate: "checkout"}, Notify: notify,
			Targets: []job.Target{{Name: "shop", URL: "http://127.0.0.1:1/"}}},
		Progress: job.Progress{RunsDone: 2, RunsTotal: 2},
		Analysis: &job.Analysis{Verdict: job.VerdictResult{Result: verdict}},
	}
}

func names(out []Outgoing) []string {
	var n []string
	for _, o := range out {
		n = append(n, o.Name)
	}
	return n
}

func TestMessages(t *testing.T) {
	both := &job.Notify{GitHub: &job.GitHubNotify{Repository: "acme/shop", SHA: sha, PR: 12},
		GitLab: &job.GitLabNotify{Project: "acme/shop", SHA: sha, MergeRequest: 3, Comment: job.CommentNever}}
	push := &job.Notify{GitHub: &job.GitHubNotify{Repository: "acme/shop", SHA: sha}}
	tests := []struct {
		name    string
		j       *job.Job
		event   string
		want    []string
		context string
	}{
		{"start", notifiedJob(job.StatusRunning, "", both), job.EventStarted, []string{"github.status.pending", "gitlab.status.pending"}, "benchq/checkout"},
		{"pass with a PR", notifiedJob(job.StatusSucceeded, job.VerdictPass, both), job.EventSucceeded,
			[]string{"github.status.success", "github.comment", "gitlab.status.success"}, "benchq/checkout"},
		{"fail", notifiedJob(job.StatusSucceeded, job.VerdictFail, push), job.EventSucceeded, []string{"github.status.failure"}, "benchq/checkout"},
		{"failed job", notifiedJob(job.StatusFailed, "", push), job.EventFailed, []string{"github.status.error"}, "benchq/checkout"},
		{"canceled job", notifiedJob(job.StatusCanceled, "", push), job.EventCanceled, []string{"github.status.error"}, "benchq/checkout"},
		{"progress sends nothing", notifiedJob(job.StatusRunning, "", both), job.EventProgress, nil, ""},
		{"no notify", notifiedJob(job.StatusSucceeded, job.VerdictPass, nil), job.EventSucceeded, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Messages(tt.j, tt.event, "http://benchq.example/")
			if err != nil {
				t.Fatal(err)
			}
			if got := names(out); !slices.Equal(got, tt.want) {
				t.Fatalf("Messages = %v, want %v", got, tt.want)
			}
			for _, o := range out {
				if o.Message.Template != "checkout" || o.Message.SHA != sha {
					t.Errorf("%s: message %+v, want the template and commit", o.Name, o.Message)
				}
				if s := o.Message.Status; s != nil && (s.Context != tt.context || s.TargetURL != "http://benchq.example/ui/jobs/"+tt.j.ID) {
					t.Errorf("%s: status %+v, want context %q and the job's page", o.Name, s, tt.context)
				}
			}
		})
	}
}

func TestCommentBody(t *testing.T) {
	j := notifiedJob(job.StatusSucceeded, job.VerdictFail, &job.Notify{GitHub: &job.GitHubNotify{Repository: "acme/shop", SHA: sha, PR: 12, Context: "benchq/perf"}})
	j.Analysis.Verdict.Failures = []job.ThresholdFailure{{Threshold: "p99_ms < 5", Target: "shop", Concurrency: 4, Value: 7}}
	out, err := Messages(j, job.EventSucceeded, "")
	if err != nil {
		t.Fatal(err)
	}
	c := out[1].Message.Comment
	if c == nil || c.Mode != job.CommentAlways || c.JobID != j.ID || c.Marker != "<!-- benchq:benchq/perf -->" {
		t.Fatalf("comment = %+v", c)
	}
	if !strings.HasPrefix(c.Body, c.Marker+"\n") || !strings.Contains(c.Body, "❌ verdict fail") || !strings.Contains(c.Body, "job `"+j.ID+"`") {
		t.Errorf("body lacks the marker, the verdict or the job:\n%s", c.Body)
	}
	if id, digest := ResultOf(c.Body); id != j.ID || digest != c.Digest {
		t.Errorf("ResultOf(body) = %q %q, want %q %q", id, digest, j.ID, c.Digest)
	}
	if d := out[0].Message.Status.Description; d != "verdict fail: p99_ms < 5 at shop c=4" {
		t.Errorf("description = %q", d)
	}
}

// TestDigest: the digest follows the verdict, the failing thresholds and
// the direction of significant changes, not the measured means.
func TestDigest(t *testing.T) {
	base := func() *job.Job {
		j := notifiedJob(job.StatusSucceeded, job.VerdictPass, nil)
		j.Analysis.Points = []job.PointSummary{{Point: job.Point{Index: 0, Target: "b"}, RPS: job.Stat{N: 2, Mean: 1000},
			Comparison: &job.Comparison{RPSPct: 3, RPSSignificance: job.Significance{Significant: false}}}}
		return j
	}
	d0 := Digest(base())
	means := base()
	means.Analysis.Points[0].RPS.Mean, means.Analysis.Points[0].Comparison.RPSPct = 1234, 1.5
	if Digest(means) != d0 {
		t.Errorf("the digest moved with the means")
	}
	for name, mut := range map[string]func(*job.Job){
		"verdict": func(j *job.Job) { j.Verdict = job.VerdictFail },
		"failure": func(j *job.Job) {
			j.Analysis.Verdict.Failures = []job.ThresholdFailure{{Threshold: "rps > 5000", Target: "b"}}
		},
		"significant change": func(j *job.Job) { j.Analysis.Points[0].Comparison.RPSSignificance.Significant = true },
	} {
		j := base()
		mut(j)
		if Digest(j) == d0 {
			t.Errorf("%s: the digest did not change", name)
		}
	}
}

func TestCommentCutToFit(t *testing.T) {
	j := notifiedJob(job.StatusSucceeded, job.VerdictPass, &job.Notify{GitHub: &job.GitHubNotify{Repository: "acme/shop", SHA: sha, PR: 12}})
	for i := range 3000 {
		j.Spec.Targets = append(j.Spec.Targets, job.Target{Name: "target-with-a-long-name-" + strings.Repeat("x", i%20)})
		j.Analysis.Points = append(j.Analysis.Points, job.PointSummary{Point: job.Point{Index: i, Target: j.Spec.Targets[i].Name, Concurrency: i + 1, Requests: 100}, Runs: 1, RPS: job.Stat{N: 1, Mean: 1}})
	}
	c, err := newComment(j, j.Spec.Notify.Targets()[0], "benchq/x", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Body) > maxBody || !strings.Contains(c.Body, "the report is cut here") {
		t.Errorf("body is %d bytes, want at most %d and cut", len(c.Body), maxBody)
	}
	if id, _ := ResultOf(c.Body); id != j.ID {
		t.Errorf("a cut body lost its result line")
	}
}
