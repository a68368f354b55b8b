package dashboard

import (
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// liveData is what the live job page's script needs besides the event
// stream, as data attributes: when the job started and the server's clock
// now (so the browser's own clock does not skew the elapsed time), the
// job's estimate (an upper bound, for an ETA before any progress) and each
// point's length (requests, duration in seconds, rate), from which the
// script tells how far the current run is.
type liveData struct {
	StartedMS  int64 // 0: not started yet
	NowMS      int64
	EstimateS  string // seconds
	Requests   string // per point, space separated
	DurationsS string
	Rates      string
}

func newLiveData(j *job.Job, points []job.Point) liveData {
	d := liveData{NowMS: time.Now().UnixMilli(), EstimateS: seconds(j.Spec.Estimate())}
	if j.StartedAt != nil {
		d.StartedMS = j.StartedAt.UnixMilli()
	}
	req, dur, rate := make([]string, len(points)), make([]string, len(points)), make([]string, len(points))
	for i, p := range points {
		req[i] = strconv.Itoa(p.Requests)
		dur[i] = seconds(p.Duration.Std())
		rate[i] = strconv.FormatFloat(p.Rate, 'g', -1, 64)
	}
	d.Requests, d.DurationsS, d.Rates = strings.Join(req, " "), strings.Join(dur, " "), strings.Join(rate, " ")
	return d
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }
