package job

import (
	"cmp"
	"net/textproto"
	"sort"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// source is a target resolved to what the engine needs: its URLs, the
// effective request options and the sweep values its own flags bring (an
// ab target's -c/-n/-t, http_load's -parallel/-fetches/-seconds/-rate).
type source struct {
	urls      []string
	urlFields []string // where each URL came from, for error paths
	req       Request
	// continueOnError keeps a run going after connection errors. ab stops
	// on a refused connection unless -r; url and http_load targets never
	// abort: failures are counted in the result.
	continueOnError bool
	// userAgent is the plan's User-Agent: ab's for an ab target, "" (the
	// engine's) for the others.
	userAgent string

	flagField   string // the ab/http_load field, where flag values are reported
	concurrency []int
	stops       []stop
	rates       []Rate
}

// stop is what ends a closed-model run: a request count, a time limit, or
// both (ab -t -n: whichever comes first).
type stop struct {
	requests int
	duration Duration
}

// resolveTarget turns targets[i] of a defaulted spec into a source. It
// reports problems of the target's form (which of url/ab/http_load, urls,
// parse errors); Validate checks the values.
func (s Spec) resolveTarget(i int) (source, []FieldError) {
	t := s.Targets[i]
	field := index("targets", i)
	var p problems
	switch n := countSet(t.URL != "", t.AB != "", t.HTTPLoad != ""); {
	case n != 1:
		p.add(field, "give exactly one of url, ab or http_load")
		return source{}, p.list
	case t.HTTPLoad == "" && len(t.URLs) > 0:
		p.add(field+".urls", "only with http_load; use url for a single address")
		return source{}, p.list
	}
	req := s.Request
	if t.Request != nil {
		req = *t.Request
	}
	switch {
	case t.URL != "":
		req.HTTPVersion = cmp.Or(req.HTTPVersion, measure.HTTP11)
		return source{urls: []string{t.URL}, urlFields: []string{field + ".url"}, req: req, continueOnError: true}, nil
	case t.AB != "":
		return s.resolveAB(t, field)
	default:
		return resolveHTTPLoad(t, field, req)
	}
}

func (s Spec) resolveAB(t Target, field string) (source, []FieldError) {
	var p problems
	plan, err := parseABTarget(t.AB)
	if err != nil {
		p.add(field+".ab", "%s", redactABMessage(t.AB, lineMessage(err)))
		return source{}, p.list
	}
	// ab reads the body from a file (-p), which a job cannot name, so the
	// body alone comes from the target's or the job's request.
	// The HTTP version too may come from there: an ab line sends ab's
	// request unless the spec asks otherwise. So may the body size cap,
	// which ab lacks: the line's --max-body, else the request's.
	from := s.Request
	if r := t.Request; r != nil {
		if r.Method != "" || len(r.Headers) > 0 || r.KeepAlive || r.Timeout != 0 || r.AcceptVariableLength {
			p.add(field+".request", "an ab target sets only body, content_type, http_version, max_streams, max_body and tls here; set the rest with ab's flags")
		}
		from = *r
	}
	req := requestFromPlan(plan, from.Body, from.ContentType)
	req.HTTPVersion = cmp.Or(from.HTTPVersion, plan.HTTPVersion)
	req.MaxStreams = cmp.Or(plan.MaxStreams, from.MaxStreams)
	// A bad max_body is reported where it was given (Validate); the line's
	// own is checked by its parser.
	req.MaxBody = cmp.Or(plan.MaxBody, max(from.MaxBody, 0), DefaultMaxBody)
	req.TLS = mergeTLS(from.TLS, tlsFromPlan(plan.TLS))
	src := source{
		urls:            plan.URLs,
		urlFields:       repeatString(field+".ab", len(plan.URLs)),
		req:             req,
		continueOnError: plan.ContinueOnError,
		userAgent:       plan.UserAgent,
	}
	src.setFlags(field+".ab", plan)
	return src, p.list
}

func resolveHTTPLoad(t Target, field string, req Request) (source, []FieldError) {
	var p problems
	plan, err := parseHTTPLoadTarget(t.HTTPLoad)
	if err != nil {
		p.add(field+".http_load", "%s", lineMessage(err))
		return source{}, p.list
	}
	if len(t.URLs) == 0 {
		p.add(field+".urls", "an http_load target needs its list of URLs here")
		return source{}, p.list
	}
	// As http_load: one connection per fetch, and each response's length
	// checked against its own URL's first one (the engine does that per
	// URL), so a URL list of different pages gives no Length failures
	// while a truncated body is still counted, as http_load's "bad byte
	// counts".
	req.KeepAlive = false
	// http_load's own request (HTTP/1.0, Host without port, no Accept)
	// is not the engine's HTTP/1.0 layout, which is ab's: it gets the job's.
	req.HTTPVersion = cmp.Or(req.HTTPVersion, measure.HTTP11)
	src := source{urls: t.URLs, req: req, continueOnError: true}
	for k := range t.URLs {
		src.urlFields = append(src.urlFields, index(field+".urls", k))
	}
	src.setFlags(field+".http_load", plan)
	return src, nil
}

// setFlags records the sweep values given by a command line's flags.
func (src *source) setFlags(field string, plan measure.Plan) {
	src.flagField = field
	if plan.Concurrency > 0 {
		src.concurrency = []int{plan.Concurrency}
	}
	if plan.Requests > 0 || plan.Duration > 0 {
		src.stops = []stop{{requests: plan.Requests, duration: Duration(plan.Duration)}}
	}
	if plan.Rate > 0 {
		r := FixedRate(plan.Rate)
		if plan.RateRamp() && len(plan.Stages) == 1 { // ab's --rate FROM:TO
			r.To = plan.Stages[0].Rate
		}
		src.rates = []Rate{r}
	}
}

// requestFromPlan expresses an ab command line's request options as a
// Request, with the job's body. Repeated headers are joined with ", ", as
// HTTP allows for list-valued fields.
func requestFromPlan(plan measure.Plan, body, contentType string) Request {
	r := Request{
		Method:               plan.Method,
		Body:                 body,
		ContentType:          plan.ContentType,
		KeepAlive:            plan.KeepAlive,
		Timeout:              Duration(plan.Timeout),
		AcceptVariableLength: plan.AcceptVariableLength,
		MaxBody:              plan.MaxBody,
	}
	if r.ContentType == "" {
		r.ContentType = contentType
	}
	// A repeated header is joined once at the end: joining as it comes
	// would copy the growing value for every repeat.
	var values map[string][]string
	for _, h := range plan.Headers {
		key := textproto.CanonicalMIMEHeaderKey(h.Key)
		if key == "Content-Type" { // ab users set it with -H as often as -T
			if r.ContentType == "" {
				r.ContentType = h.Value
			}
			continue
		}
		if values == nil {
			values = make(map[string][]string)
		}
		values[key] = append(values[key], h.Value)
	}
	if values != nil {
		r.Headers = make(map[string]string, len(values))
		for key, vs := range values {
			r.Headers[key] = strings.Join(vs, ", ")
		}
	}
	return r.withDefaults()
}

// headerList returns the headers in a stable order (sorted by name), since
// a JSON object has none.
func (r Request) headerList() []measure.Header {
	if len(r.Headers) == 0 {
		return nil
	}
	keys := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]measure.Header, len(keys))
	for i, k := range keys {
		list[i] = measure.Header{Key: k, Value: r.Headers[k]}
	}
	return list
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

func repeatString(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
