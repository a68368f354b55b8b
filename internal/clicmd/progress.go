package clicmd

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/benchq/benchq/internal/client"
)

// progressView shows a followed job's progress on stderr.
type progressView interface {
	update(u client.Update)
	// finish ends the display; final is the job as it ended (zero when
	// the wait was cut short).
	finish(final client.Job)
}

// newProgressView picks the display: a bar on a terminal, a line at most
// every second elsewhere (CI logs keep every line, and \r redraws would
// fill them with garbage), nothing with --quiet.
func newProgressView(w io.Writer, tty, quiet bool, j client.Job) progressView {
	switch {
	case quiet:
		return quietView{}
	case tty:
		return newBarView(w, j.Progress.RunsTotal)
	}
	return &lineView{id: j.ID, w: w, every: time.Second}
}

type quietView struct{}

func (quietView) update(client.Update) {}
func (quietView) finish(client.Job)    {}

// barView draws runs done / runs total as a bar, with the current run's
// requests and rate beside it.
type barView struct {
	w     io.Writer
	bar   *progressbar.ProgressBar
	total int
}

func newBarView(w io.Writer, runsTotal int) *barView {
	total := max(runsTotal, 1) // the bar needs a positive max; GET fixes it
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("queued"),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("runs"),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
	)
	return &barView{w: w, bar: bar, total: total}
}

func (v *barView) update(u client.Update) {
	p := u.Progress
	if p.RunsTotal > 0 && p.RunsTotal != v.total {
		v.total = p.RunsTotal
		v.bar.ChangeMax(p.RunsTotal)
	}
	v.bar.Describe(fmt.Sprintf("%s  %d req  %.0f req/s", u.Status, p.RequestsDone, p.CurrentRPS))
	_ = v.bar.Set(min(p.RunsDone, v.total))
}

func (v *barView) finish(final client.Job) {
	if final.ID != "" {
		v.bar.Describe(string(final.Status))
		_ = v.bar.Set(min(final.Progress.RunsDone, v.total))
	}
	_ = v.bar.Exit() // keeps the bar as it stands, finished or not
	fmt.Fprintln(v.w)
}

// lineView prints a status line at most once per interval.
type lineView struct {
	id    string
	w     io.Writer
	every time.Duration
	last  time.Time
}

func (v *lineView) update(u client.Update) {
	now := time.Now()
	if !v.last.IsZero() && now.Sub(v.last) < v.every {
		return
	}
	v.last = now
	fmt.Fprintf(v.w, "benchq: %s\n", statusLine(client.Job{ID: v.id, Status: u.Status, Progress: u.Progress}))
}

func (v *lineView) finish(client.Job) {}
