package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/report"
)

// statuses are the list filter's choices, in lifecycle order.
var statuses = []job.Status{job.StatusQueued, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCanceled}

type jobsData struct {
	base
	Statuses []job.Status
	Status   string
	Label    string
	Name     string
	Cursor   string
	Jobs     []client.Job
	Next     string // the next page's URL, "" on the last page
	Error    string
}

// jobsPage lists the caller's jobs as GET /v1/jobs does, with its filters.
func (h *Handler) jobsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := jobsData{base: h.base(r, "Jobs", "jobs"), Statuses: statuses,
		Status: q.Get("status"), Label: strings.TrimSpace(q.Get("label")), Name: strings.TrimSpace(q.Get("name")), Cursor: q.Get("cursor")}
	f := client.ListFilter{Status: d.Status, Labels: strings.Fields(d.Label), Name: d.Name, Cursor: d.Cursor}
	page, err := h.apiClient(r).List(r.Context(), f)
	if err != nil {
		var ae *client.APIError
		if !asAPIError(err, &ae) || ae.Status != http.StatusBadRequest {
			h.apiError(w, r, err)
			return
		}
		// A filter the API refused: say which, keep the form.
		d.Error = problemText(ae.Problem)
		h.render(w, r, http.StatusBadRequest, "jobs", d)
		return
	}
	d.Jobs = page.Jobs
	if page.NextCursor != "" {
		next := url.Values{}
		for k, v := range map[string]string{"status": d.Status, "label": d.Label, "name": d.Name, "cursor": page.NextCursor} {
			if v != "" {
				next.Set(k, v)
			}
		}
		d.Next = Prefix + "/?" + next.Encode()
	}
	h.render(w, r, http.StatusOK, "jobs", d)
}

// results is the JSON report: what the dashboard renders a job from.
type results struct {
	Job      *job.Job     `json:"job"`
	Runs     []job.Run    `json:"runs"`
	Analysis job.Analysis `json:"analysis"`
}

// results reads a job with its runs and analysis through the API's JSON
// report, so the dashboard sees exactly what the report shows.
func (h *Handler) results(r *http.Request, id string) (results, error) {
	body, err := h.apiClient(r).Report(r.Context(), id, string(report.FormatJSON))
	if err != nil {
		return results{}, err
	}
	defer body.Close()
	var res results
	if err := json.NewDecoder(body).Decode(&res); err != nil {
		return results{}, fmt.Errorf("dashboard: decode report of job %s: %w", id, err)
	}
	if res.Job == nil {
		return results{}, fmt.Errorf("dashboard: report of job %s names no job", id)
	}
	return res, nil
}

// format is one report download.
type format struct {
	Name, Label string
}

// downloads lists every report format, named as the report table names
// them, those a person reads first (the page, the tables, the charts)
// ahead of the data.
func downloads() []format {
	order := []report.Format{report.FormatHTML, report.FormatMarkdown, report.FormatSVG, report.FormatPNG,
		report.FormatJSON, report.FormatCSV, report.FormatAB, report.FormatHTTPLoad, report.FormatGnuplot,
		report.FormatTimelineCSV, report.FormatTimelineNDJSON, report.FormatHGRM, report.FormatJUnit}
	out := make([]format, len(order))
	for i, f := range order {
		out[i] = format{Name: string(f), Label: f.Label()}
	}
	return out
}

type jobData struct {
	base
	Job     *job.Job
	View    report.View
	Active  bool
	Repeats int
	Points  []string // each point as the live view names it, by index
	Live    liveData // the live view's ETA and chart (live.go)
	Targets []job.Target
	Sweep   job.Sweep
	Formats []format
	Others  []client.Job // jobs to compare with
	Notice  string
	// OpenRunCharts unfolds the runs' charts of a job of a few runs; a
	// sweep of many keeps them folded, and a browser loads a folded run's
	// (lazy) images only when it is opened.
	OpenRunCharts bool
}

// maxOpenRunCharts is the most runs whose charts the job page unfolds.
const maxOpenRunCharts = 4

// jobPage shows one job: live progress while it is queued or running, the
// report's chart and tables once it ended (and the runs so far before).
func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := h.results(r, id)
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	v, err := report.NewView(res.Job, res.Runs, res.Analysis)
	if err != nil {
		h.cfg.Log.Error("dashboard: job view", "job", id, "err", err)
		h.errorPage(w, r, http.StatusInternalServerError, "The job's report could not be built.")
		return
	}
	spec := res.Job.Spec
	d := jobData{base: h.base(r, v.Title, "jobs"), Job: res.Job, View: v, Active: !res.Job.Status.Terminal(),
		Repeats: spec.Sweep.Repeats, Targets: spec.Targets, Sweep: spec.Sweep, Formats: downloads(), Notice: r.URL.Query().Get("notice"),
		OpenRunCharts: len(v.Runs) <= maxOpenRunCharts}
	for _, p := range spec.Points() {
		d.Points = append(d.Points, pointLabel(p))
	}
	if d.Active {
		d.Live = newLiveData(res.Job, spec.Points())
	}
	if !d.Active {
		if page, err := h.apiClient(r).List(r.Context(), client.ListFilter{Limit: 50}); err == nil {
			for _, o := range page.Jobs {
				if o.ID != id && o.Status.Terminal() {
					d.Others = append(d.Others, o)
				}
			}
		}
	}
	h.render(w, r, http.StatusOK, "job", d)
}

// pointLabel names a point as a person reads it: "nginx · c=8 · n=2000",
// a ramp by its range: "nginx · c=100 · rate=100→5000/s".
func pointLabel(p job.Point) string {
	stop := fmt.Sprintf("n=%d", p.Requests)
	switch {
	case p.Rate > 0 && p.RateTo > 0 && p.RateTo != p.Rate:
		stop = fmt.Sprintf("rate=%g→%g/s", p.Rate, p.RateTo)
	case p.Rate > 0:
		stop = fmt.Sprintf("rate=%g/s", p.Rate)
	case p.Duration > 0:
		stop = "t=" + p.Duration.String()
	}
	return fmt.Sprintf("%s · c=%d · %s", p.Target, p.Concurrency, stop)
}

// reportFile serves one of the job's reports through the API's report
// endpoint: the chart images of the job page (the sweep's, and each run's
// chosen by chart and run) and every download.
func (h *Handler) reportFile(w http.ResponseWriter, r *http.Request) {
	in := r.URL.Query()
	out := url.Values{"format": {in.Get("format")}}
	for _, k := range []string{"chart", "run"} {
		if in.Has(k) {
			out.Set(k, in.Get(k))
		}
	}
	h.proxy(w, r, "/v1/jobs/"+url.PathEscape(r.PathValue("id"))+"/report?"+out.Encode())
}

// proxy answers with the API's answer to a GET of path, as the caller: for
// the files a page links to (charts, downloads) rather than embeds.
func (h *Handler) proxy(w http.ResponseWriter, r *http.Request, path string) {
	c := h.apiClient(r)
	in, err := http.NewRequestWithContext(r.Context(), http.MethodGet, c.BaseURL+path, nil)
	if err != nil {
		h.errorPage(w, r, http.StatusBadRequest, "That is not a page of this dashboard.")
		return
	}
	if c.Key != "" {
		in.Header.Set("Authorization", "Bearer "+c.Key)
	}
	resp, err := c.HTTP.Do(in)
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type", "Content-Disposition", "Content-Security-Policy"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	if r.URL.Query().Get("download") != "" {
		w.Header().Set("Content-Disposition", strings.Replace(resp.Header.Get("Content-Disposition"), "inline", "attachment", 1))
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// cancelJob cancels through DELETE /v1/jobs/{id} and goes back to the job.
func (h *Handler) cancelJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	notice := "Cancel requested."
	if _, err := h.apiClient(r).Cancel(r.Context(), id); err != nil {
		var ae *client.APIError
		if !asAPIError(err, &ae) || ae.Status != http.StatusConflict {
			h.apiError(w, r, err)
			return
		}
		notice = "The job had already finished."
	}
	http.Redirect(w, r, Prefix+"/jobs/"+url.PathEscape(id)+"?notice="+url.QueryEscape(notice), http.StatusSeeOther)
}

type compareData struct {
	base
	A, B   *job.Job
	View   report.View
	Others []client.Job
}

// comparePage compares job a with job b as its baseline, cell by cell with
// the significance over repeats, as a compare_to gate would.
func (h *Handler) comparePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	aID, bID := q.Get("a"), q.Get("b")
	if aID == "" || bID == "" {
		h.errorPage(w, r, http.StatusBadRequest, "Choose two jobs to compare.")
		return
	}
	a, err := h.results(r, aID)
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	b, err := h.results(r, bID)
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	an := analysis.AnalyzeAgainst(a.Job.Spec, a.Runs, &analysis.Baseline{JobID: b.Job.ID, Spec: b.Job.Spec, Runs: b.Runs})
	v, err := report.NewView(a.Job, a.Runs, an)
	if err != nil {
		h.cfg.Log.Error("dashboard: compare view", "a", aID, "b", bID, "err", err)
		h.errorPage(w, r, http.StatusInternalServerError, "The comparison could not be built.")
		return
	}
	h.render(w, r, http.StatusOK, "compare", compareData{base: h.base(r, "Compare", "jobs"), A: a.Job, B: b.Job, View: v})
}

// compareChart draws job a beside its baseline b on one scale, as an SVG
// image (the page's CSP keeps inline styles, which the chart carries, out
// of the page itself).
func (h *Handler) compareChart(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, err := h.results(r, q.Get("a"))
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	b, err := h.results(r, q.Get("b"))
	if err != nil {
		h.apiError(w, r, err)
		return
	}
	var chart bytes.Buffer
	if err := report.WriteCompareSVG(&chart, a.Job, b.Job, analysis.Analyze(a.Job.Spec, a.Runs), analysis.Analyze(b.Job.Spec, b.Runs)); err != nil {
		h.cfg.Log.Error("dashboard: compare chart", "a", a.Job.ID, "b", b.Job.ID, "err", err)
		http.Error(w, "the comparison could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	_, _ = w.Write(chart.Bytes())
}
