package dashboard

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/client"
)

// formTargets is how many target rows the form offers.
const formTargets = 4

// specForm is the submit form as typed. Its inputs are named by the spec
// fields they fill ("targets[0].url", "sweep.concurrency"), so the API's
// 422 lands next to the input it names.
type specForm struct {
	Name        string
	Labels      string
	TargetNames [formTargets]string
	TargetURLs  [formTargets]string
	Concurrency string
	Stop        string // "requests" or "duration"
	Requests    string
	Duration    string
	Repeats     string
	KeepAlive   bool
	Baseline    string
}

type newData struct {
	base
	Form    specForm
	Rows    []int
	Errors  map[string][]string // by input name
	General []string            // problems no input is named for
}

func defaultForm() specForm {
	f := specForm{Concurrency: "1 4 16", Stop: "requests", Requests: "1000", Duration: "10s", Repeats: "3", KeepAlive: true}
	f.TargetNames[0] = "a"
	return f
}

func (h *Handler) newPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "new", h.newData(r, defaultForm()))
}

func (h *Handler) newData(r *http.Request, f specForm) newData {
	d := newData{base: h.base(r, "New job", "new"), Form: f, Errors: map[string][]string{}}
	for i := range formTargets {
		d.Rows = append(d.Rows, i)
	}
	return d
}

func readForm(r *http.Request) specForm {
	v := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	f := specForm{Name: v("name"), Labels: v("labels"), Concurrency: v("sweep.concurrency"), Stop: v("stop"),
		Requests: v("sweep.requests"), Duration: v("sweep.duration"), Repeats: v("sweep.repeats"),
		KeepAlive: r.PostFormValue("request.keepalive") != "", Baseline: v("baseline")}
	for i := range formTargets {
		f.TargetNames[i] = v("targets[" + strconv.Itoa(i) + "].name")
		f.TargetURLs[i] = v("targets[" + strconv.Itoa(i) + "].url")
	}
	return f
}

// spec turns the form into a job spec as JSON, and the row of the form
// each spec target came from. It parses nothing it does not have to: a
// list entry that is not a number is sent as typed, for the API to name.
func (f specForm) spec() ([]byte, []int) {
	s := map[string]any{}
	if f.Name != "" {
		s["name"] = f.Name
	}
	if labels := strings.Fields(f.Labels); len(labels) > 0 {
		m := map[string]string{}
		for _, l := range labels {
			k, v, _ := strings.Cut(l, ":")
			m[k] = v
		}
		s["labels"] = m
	}
	var targets []map[string]any
	var rows []int
	for i := range formTargets {
		if f.TargetNames[i] == "" && f.TargetURLs[i] == "" {
			continue
		}
		t := map[string]any{"url": f.TargetURLs[i]}
		if f.TargetNames[i] != "" {
			t["name"] = f.TargetNames[i]
		}
		targets = append(targets, t)
		rows = append(rows, i)
	}
	s["targets"] = targets
	sweep := map[string]any{"concurrency": list(f.Concurrency)}
	if f.Stop == "duration" {
		sweep["duration"] = strings.FieldsFunc(f.Duration, separator)
	} else {
		sweep["requests"] = list(f.Requests)
	}
	if f.Repeats != "" {
		sweep["repeats"] = number(f.Repeats)
	}
	s["sweep"] = sweep
	s["request"] = map[string]any{"keepalive": f.KeepAlive}
	if f.Baseline != "" {
		s["baseline"] = f.Baseline
	}
	b, _ := json.Marshal(s) // maps of strings and numbers always encode
	return b, rows
}

func separator(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }

func list(s string) []any {
	out := []any{}
	for _, f := range strings.FieldsFunc(s, separator) {
		out = append(out, number(f))
	}
	return out
}

func number(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// submitJob posts the form's spec to POST /v1/jobs: the API's validation,
// quotas and target policy decide, and a 422 re-renders the form with each
// message next to its input.
func (h *Handler) submitJob(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	f := readForm(r)
	spec, rows := f.spec()
	sub, err := h.apiClient(r).Submit(r.Context(), client.Submission{Spec: spec})
	if err == nil {
		http.Redirect(w, r, Prefix+"/jobs/"+url.PathEscape(sub.Job.ID), http.StatusSeeOther)
		return
	}
	var ae *client.APIError
	if !asAPIError(err, &ae) || ae.Status == http.StatusUnauthorized {
		h.apiError(w, r, err)
		return
	}
	d := h.newData(r, f)
	problems := ae.Problem.Errors
	if len(problems) == 0 {
		problems = []client.FieldProblem{{Field: ae.Problem.Field, Message: problemText(ae.Problem)}}
	}
	for _, p := range problems {
		if in := inputFor(p.Field, rows, f.Stop); in != "" {
			d.Errors[in] = append(d.Errors[in], p.Message)
		} else {
			d.General = append(d.General, fieldPrefix(p.Field)+p.Message)
		}
	}
	h.render(w, r, ae.Status, "new", d)
}

func fieldPrefix(field string) string {
	if field == "" {
		return ""
	}
	return field + ": "
}

// inputFor names the form input a problem's field belongs to: the spec's
// targets[i] is the form's row rows[i], and a field deeper than an input
// (targets[0].url.host) belongs to the input above it.
func inputFor(field string, rows []int, stop string) string {
	if rest, ok := strings.CutPrefix(field, "targets["); ok {
		n, tail, _ := strings.Cut(rest, "]")
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i >= len(rows) {
			return ""
		}
		row := "targets[" + strconv.Itoa(rows[i]) + "]"
		switch {
		case strings.HasPrefix(tail, ".name"):
			return row + ".name"
		default:
			return row + ".url"
		}
	}
	if field == "targets" {
		return "targets[0].url"
	}
	for _, in := range []string{"name", "labels", "sweep.concurrency", "sweep.requests", "sweep.duration", "sweep.repeats", "baseline", "request.keepalive"} {
		if field == in || strings.HasPrefix(field, in+".") || strings.HasPrefix(field, in+"[") {
			return in
		}
	}
	if strings.HasPrefix(field, "sweep") {
		if stop == "duration" {
			return "sweep.duration"
		}
		return "sweep.requests"
	}
	return ""
}
