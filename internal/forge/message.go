package forge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/report"
)

// State is a commit status, in GitHub's words (gitlab.go maps them).
type State string

// The commit states a job sets.
const (
	StatePending State = "pending"
	StateSuccess State = "success"
	StateFailure State = "failure"
	StateError   State = "error"
)

// Message is one thing a job sends to one forge: a commit status or the
// request comment. It is kept as the delivery's payload, so every attempt
// and redelivery sends what it said when the job started or ended.
type Message struct {
	Forge string `json:"forge"` // job.ForgeGitHub or job.ForgeGitLab
	// Repository is GitHub's full name or GitLab's project path.
	Repository string `json:"repository"`
	SHA        string `json:"sha"`
	// Request is the pull request number or merge request iid; 0 for a
	// status of a push.
	Request int `json:"request,omitempty"`
	// Template is the job's template, whose trigger's api_token is sent
	// rather than the service's token when it has one.
	Template string   `json:"template,omitempty"`
	Status   *Status  `json:"status,omitempty"`
	Comment  *Comment `json:"comment,omitempty"`
}

// Status is a commit status.
type Status struct {
	State State `json:"state"`
	// Context names the status (GitLab: its name).
	Context     string `json:"context"`
	Description string `json:"description,omitempty"`
	// TargetURL links the job's dashboard page; empty without a public
	// URL (a relative link would be refused).
	TargetURL string `json:"target_url,omitempty"`
}

// Comment is the request comment of one context: Marker finds it among
// the request's comments; JobID and Digest, which its body carries on a
// hidden line too, say which job it shows and whether its result
// changed.
type Comment struct {
	Mode   job.CommentMode `json:"mode"`
	Marker string          `json:"marker"`
	JobID  string          `json:"job_id"`
	Digest string          `json:"digest"`
	Body   string          `json:"body"`
}

// Outgoing is a message and the name of its delivery in the job's log
// (job.ForgeStatusDelivery, job.ForgeCommentDelivery).
type Outgoing struct {
	Name    string
	Message Message
}

// maxDescription bounds a status description: GitHub shows about a line
// of it, GitLab keeps 255 bytes.
const maxDescription = 140

// maxBody bounds a comment's body: GitHub refuses one over 65 536
// characters. A longer report is cut and links to the whole.
const maxBody = 60000

// Messages are what job j sends on event (job.EventStarted or a terminal
// event), one list entry per forge its notify names and per thing sent:
// a pending status when it starts; the final status, and for a request
// the comment unless its mode is never, when it ends. linkBase is the
// API's public URL ("" leaves statuses without a link).
func Messages(j *job.Job, event, linkBase string) ([]Outgoing, error) {
	var out []Outgoing
	for _, t := range j.Spec.Notify.Targets() {
		base := Message{Forge: t.Forge, Repository: t.Repository, SHA: t.SHA, Request: t.Request, Template: j.Spec.Labels[job.LabelTemplate]}
		context := j.Spec.NotifyContext(t.Context)
		status := Status{Context: context, TargetURL: jobURL(linkBase, j.ID)}
		if event == job.EventStarted {
			status.State, status.Description = StatePending, "benchmark running"
			m := base
			m.Status = &status
			out = append(out, Outgoing{Name: job.ForgeStatusDelivery(t.Forge, string(StatePending)), Message: m})
			continue
		}
		if !job.IsFinalEvent(event) {
			continue
		}
		status.State, status.Description = FinalState(j), describe(j)
		m := base
		m.Status = &status
		out = append(out, Outgoing{Name: job.ForgeStatusDelivery(t.Forge, string(status.State)), Message: m})
		if !t.Commented() {
			continue
		}
		c, err := newComment(j, t, context, linkBase)
		if err != nil {
			return nil, err
		}
		m = base
		m.Comment = &c
		out = append(out, Outgoing{Name: job.ForgeCommentDelivery(t.Forge), Message: m})
	}
	return out, nil
}

// FinalState is the commit state of an ended job: success when it
// succeeded and its verdict did not fail, failure when the verdict failed,
// error when the job could not be benchmarked or was canceled.
func FinalState(j *job.Job) State {
	switch {
	case j.Status == job.StatusSucceeded && j.Verdict == job.VerdictFail:
		return StateFailure
	case j.Status == job.StatusSucceeded:
		return StateSuccess
	}
	return StateError
}

// jobURL is the dashboard page of job id under base, "" without a base.
func jobURL(base, id string) string {
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(base, "/") + "/ui/jobs/" + id
}

// describe is an ended job's status description: its verdict and what
// failed first, or why it did not run through.
func describe(j *job.Job) string {
	runs := fmt.Sprintf("%d of %d runs", j.Progress.RunsDone, j.Progress.RunsTotal)
	var s string
	switch {
	case j.Status == job.StatusCanceled:
		s = "canceled after " + runs
	case j.Status != job.StatusSucceeded:
		s = "job failed: " + firstLine(j.Error)
	case j.Verdict == job.VerdictFail:
		s = "verdict fail"
		if a := j.Analysis; a != nil && len(a.Verdict.Failures) > 0 {
			f := a.Verdict.Failures[0]
			s += fmt.Sprintf(": %s at %s c=%d", f.Threshold, f.Target, f.Concurrency)
			if n := len(a.Verdict.Failures); n > 1 {
				s += fmt.Sprintf(" and %d more", n-1)
			}
		}
	case j.Verdict == job.VerdictPass:
		s = "verdict pass, " + runs
	default:
		s = "no thresholds, " + runs
	}
	return truncate(s, maxDescription)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Marker is the hidden line a context's comment carries, which finds it
// again among the request's comments.
func Marker(context string) string { return "<!-- benchq:" + context + " -->" }

// resultPrefix opens the hidden line that says which job a comment shows
// and the digest of its result.
const resultPrefix = "<!-- benchq-result:"

// resultLine is that line.
func resultLine(jobID, digest string) string {
	return resultPrefix + " job " + jobID + " digest " + digest + " -->"
}

// ResultOf reads the job and the digest a comment body carries, "" for
// a body that carries none.
func ResultOf(body string) (jobID, digest string) {
	_, rest, ok := strings.Cut(body, resultPrefix)
	if !ok {
		return "", ""
	}
	line, _, _ := strings.Cut(rest, " -->")
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "job" || f[2] != "digest" {
		return "", ""
	}
	return f[1], f[3]
}

// newComment renders j's result for the comment of target t: a line with
// the verdict, the job and the commit, the job's Markdown report (cut to
// fit) and the digest of its result.
func newComment(j *job.Job, t job.NotifyTarget, context, linkBase string) (Comment, error) {
	var md bytes.Buffer
	a := job.Analysis{}
	if j.Analysis != nil {
		a = *j.Analysis
	}
	if err := report.Write(&md, report.FormatMarkdown, j, nil, a); err != nil {
		return Comment{}, fmt.Errorf("forge: render the comment of job %s: %w", j.ID, err)
	}
	ref := "job `" + j.ID + "`"
	if u := jobURL(linkBase, j.ID); u != "" {
		ref = "[job " + j.ID + "](" + u + ")"
	}
	digest := Digest(j)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**%s** %s · %s · commit `%s`\n\n", Marker(context), context, headline(j), ref, short(t.SHA))
	body := md.String()
	if room := maxBody - b.Len() - 200; len(body) > room {
		body = cutLines(body, room) + "\n\n… the report is cut here; the job has it whole.\n"
	}
	b.WriteString(body)
	fmt.Fprintf(&b, "\n%s\n", resultLine(j.ID, digest))
	mode := t.Comment
	if mode == "" {
		mode = job.CommentAlways
	}
	return Comment{Mode: mode, Marker: Marker(context), JobID: j.ID, Digest: digest, Body: b.String()}, nil
}

// headline is the verdict as the comment's first line shows it.
func headline(j *job.Job) string {
	switch FinalState(j) {
	case StateFailure:
		return "❌ verdict fail"
	case StateError:
		return "⚠️ " + string(j.Status)
	}
	if j.Verdict == job.VerdictPass {
		return "✅ verdict pass"
	}
	return "✅ succeeded (no thresholds)"
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// Digest sums what a comment's result is, for comment mode on_change:
// the job's status and verdict, each failing threshold by cell, and the
// direction of each significant change (to the baseline target and to
// the compare_to job). The means themselves differ from run to run, so
// they are left out: an unchanged result is what on_change keeps.
func Digest(j *job.Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s verdict %s\n", j.Status, j.Verdict)
	if a := j.Analysis; a != nil {
		for _, f := range a.Verdict.Failures {
			fmt.Fprintf(&b, "fail %q %s point %d\n", f.Threshold, f.Target, f.Point)
		}
		for _, p := range a.Points {
			writeChange(&b, "baseline", p.Point.Index, p.Comparison)
		}
		if c := a.CompareTo; c != nil {
			for _, cell := range c.Cells {
				writeChange(&b, "compare_to", cell.Point.Index, cell.Comparison)
			}
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

func writeChange(b *strings.Builder, against string, point int, c *job.Comparison) {
	if c == nil {
		return
	}
	for _, m := range []struct {
		name string
		pct  float64
		sig  job.Significance
	}{{"rps", c.RPSPct, c.RPSSignificance}, {"p50", c.P50Pct, c.P50Significance}, {"p99", c.P99Pct, c.P99Significance}} {
		if !m.sig.Significant {
			continue
		}
		dir := "+"
		if m.pct < 0 {
			dir = "-"
		}
		fmt.Fprintf(b, "%s point %d %s %s\n", against, point, m.name, dir)
	}
}

// cutLines cuts s to at most n bytes at a line's end.
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:max(n, 0)]
	if i := strings.LastIndexByte(s, '\n'); i > 0 {
		return s[:i]
	}
	return s
}

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// keep says why the comment found, whose body is body, is not to be
// replaced by c ("" when it is): it shows a newer job (ids sort by
// creation time, so a late retry of an older job's comment does not undo
// a newer one), it says exactly this already, or mode on_change finds the
// same result in it.
func keep(c *Comment, body string) string {
	shown, digest := ResultOf(body)
	switch {
	case shown > c.JobID:
		return "it shows job " + shown + ", newer than this one"
	case body == c.Body:
		return "it says this already"
	case c.Mode == job.CommentOnChange && digest == c.Digest:
		return "its result is unchanged (comment on_change)"
	}
	return ""
}
