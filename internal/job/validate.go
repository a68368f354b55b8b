package job

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/measure"
	"github.com/benchq/benchq/internal/monitor"
	"github.com/benchq/benchq/internal/netguard"
)

// URLChecker is the address policy: it returns an error for a URL the
// service must not send traffic to (internal/netguard provides it). It sees
// only URLs whose scheme is http or https and that have a host. An
// *netguard.Error or *errcode.Error in its chain says what the client
// reads (a refused address, a host that does not resolve); any other
// error is shown as a refusal by the policy.
type URLChecker func(u *url.URL) error

// URLProblem is what a client reads of a URLChecker's error.
func URLProblem(err error) string {
	var ne *netguard.Error
	if errors.As(err, &ne) {
		return ne.Message
	}
	if ce, ok := errcode.As(err); ok {
		return ce.Message
	}
	return "refused by the address policy: " + err.Error()
}

// validator checks a defaulted spec against limits.
type validator struct {
	lim   Limits
	check URLChecker
	problems
}

// Validate checks s, with defaults applied as WithDefaults does, against
// lim (zero fields take DefaultLimits) and the address policy check (nil
// admits every http and https URL: for tests and tools only). It returns
// every problem at once as a *errcode.Error naming each field path, or
// nil. Validate fills no field; store s.WithDefaults().
func (s Spec) Validate(lim Limits, check URLChecker) error {
	d, res := s.resolve()
	v := &validator{lim: lim.withDefaults(), check: check}
	v.meta(d)
	v.targets(d, res)
	// Checked as filled even where WithDefaults leaves it as given (a job of
	// ab lines only), so the same spec passes or fails either way.
	v.request("request", d.Request.withDefaults())
	v.sweep(d.Sweep)
	v.stages(d, res)
	v.cells(d, res)
	v.baseline(d)
	v.comparisons(d)
	v.thresholds(d)
	v.trend(d)
	v.changePoints(d)
	v.compareTo(d.CompareTo)
	v.webhook(d.Webhook)
	v.notify(d.Notify) // notify.go
	v.timeline(d.Timeline)
	v.warmup(d, res)
	v.search(d)
	v.settle(d)
	return v.err()
}

const (
	maxNameLen   = 200
	maxLabels    = 32
	maxLabelKey  = 63
	maxLabelVal  = 255
	maxTargetLen = 64
)

func (v *validator) meta(s Spec) {
	if len(s.Name) > maxNameLen || hasControl(s.Name) {
		v.add("name", "want at most %d printable characters", maxNameLen)
	}
	if len(s.Labels) > maxLabels {
		v.add("labels", "%d labels exceed the limit of %d", len(s.Labels), maxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		field := "labels[" + fmt.Sprintf("%q", k) + "]"
		if !validLabelKey(k) {
			v.add(field, "a label name is 1 to %d letters, digits, '_', '-', '.' or '/'", maxLabelKey)
		}
		if val := s.Labels[k]; len(val) > maxLabelVal || hasControl(val) {
			v.add(field, "a label value is at most %d printable characters", maxLabelVal)
		}
	}
}

// settle refuses a wait for a quiet server no target can read.
func (v *validator) settle(s Spec) {
	if s.Sweep.Settle <= 0 {
		return
	}
	for _, t := range s.Targets {
		if t.Monitor != nil {
			return
		}
	}
	v.add("sweep.settle", "no target has a monitor to tell when its server is quiet: add targets[].monitor, or leave settle out")
}

func (v *validator) targets(s Spec, res []resolved) {
	if len(s.Targets) == 0 {
		v.add("targets", "at least one target is required")
	}
	seen := make(map[string]int, len(s.Targets))
	for i, t := range s.Targets {
		field := index("targets", i)
		v.targetName(field+".name", t.Name)
		if j, dup := seen[t.Name]; dup {
			v.add(field+".name", "%q is already the name of targets[%d]", t.Name, j)
		} else {
			seen[t.Name] = i
		}
		if t.Monitor != nil {
			v.monitor(field+".monitor", *t.Monitor)
		}
		src, errs := res[i].src, res[i].errs
		if len(errs) > 0 {
			v.append(errs...)
			continue
		}
		for k, raw := range src.urls {
			v.url(src.urlFields[k], raw)
		}
		// The engine's HTTP/2 path runs the closed model only.
		switch {
		case src.req.HTTPVersion != measure.HTTP2:
		case len(src.rates) > 0:
			v.add(field+".ab", "--rate: HTTP/2 runs the closed model only")
		case len(s.Sweep.Rate) > 0:
			v.add("sweep.rate", "target %q speaks HTTP/2, which runs the closed model only", t.Name)
		}
		switch {
		case t.AB != "":
			// The version may come from a request object, checked where
			// it was given; the rest of src.req is the ab line's.
			abReq := src.req
			abReq.HTTPVersion, abReq.MaxStreams = "", 0
			v.request(field+".ab", abReq)
			if t.Request == nil || t.Request.MaxStreams == 0 {
				v.maxStreams(field+".ab", Request{HTTPVersion: src.req.HTTPVersion, MaxStreams: src.req.MaxStreams})
			}
			if t.Request != nil {
				v.httpVersion(field+".request", t.Request.HTTPVersion)
				v.maxStreams(field+".request", Request{HTTPVersion: src.req.HTTPVersion, MaxStreams: t.Request.MaxStreams})
				if t.Request.MaxBody < 0 {
					v.add(field+".request.max_body", "%d is not a positive number of bytes", t.Request.MaxBody)
				}
			}
		case t.Request != nil:
			v.request(field+".request", *t.Request)
		}
	}
}

// monitor checks a target's metrics endpoint: its URL as a target's
// (scheme, host, the address policy), its selectors and numbers.
func (v *validator) monitor(field string, m monitor.Spec) {
	if m.Prometheus == "" {
		v.add(field+".prometheus", "required: the URL of a Prometheus metrics endpoint, e.g. http://127.0.0.1:9100/metrics")
	} else {
		v.url(field+".prometheus", m.Prometheus)
	}
	for _, p := range m.Problems() {
		v.add(field+"."+p.Field, "%s", p.Message)
	}
}

func (v *validator) targetName(field, name string) {
	switch {
	case strings.TrimSpace(name) == "":
		v.add(field, "a target name cannot be blank")
	case len(name) > maxTargetLen || hasControl(name):
		v.add(field, "want at most %d printable characters", maxTargetLen)
	case strings.Contains(name, ":"):
		v.add(field, "a target name cannot contain ':' (thresholds use \"name: metric op value\")")
	}
}

// url checks one target or webhook address: scheme, host, then the policy.
func (v *validator) url(field, raw string) {
	if i := unsendable(raw); i >= 0 {
		v.add(field, "%q has %s at byte %d: a URL is sent as it is written, so write it percent-encoded (%%%02X)", RedactURL(raw), describeByte(raw[i]), i, raw[i])
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		v.add(field, "%q is not a URL: %v", RedactURL(raw), unwrapURLError(err))
		return
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		v.add(field, "scheme %q is not allowed: want http or https", u.Scheme)
		return
	}
	if u.Hostname() == "" {
		v.add(field, "%q has no host", RedactURL(raw))
		return
	}
	if ps := u.Port(); ps != "" {
		if port, err := strconv.Atoi(ps); err != nil || port < 1 || port > 65535 {
			v.add(field, "port %q is not 1..65535", ps)
			return
		}
	}
	if v.check == nil {
		return
	}
	if err := v.check(u); err != nil {
		v.add(field, "%s", URLProblem(err))
	}
}

// unsendable is the index of the first byte of raw that cannot stand in
// a request line as it is (a space, a control character, anything outside
// ASCII), or -1. Such a URL would be sent raw or rewritten, and either way
// the target would not see what the spec says.
func unsendable(raw string) int {
	for i := range len(raw) {
		if c := raw[i]; c <= ' ' || c >= 0x7f {
			return i
		}
	}
	return -1
}

func describeByte(c byte) string {
	switch {
	case c == ' ':
		return "a space"
	case c < ' ' || c == 0x7f:
		return "a control character"
	default:
		return "a byte outside ASCII"
	}
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func (v *validator) baseline(s Spec) {
	if s.Baseline == "" {
		return
	}
	names := make([]string, len(s.Targets))
	for i, t := range s.Targets {
		if t.Name == s.Baseline {
			return
		}
		names[i] = t.Name
	}
	v.add("baseline", "%q names no target (targets: %s)", s.Baseline, strings.Join(names, ", "))
}

func (v *validator) thresholds(s Spec) {
	for i, e := range s.Thresholds {
		entry := index("thresholds", i)
		field := entry // the string form, or an object saying no more
		if !e.plain() {
			field += ".threshold"
		}
		th, err := parseThreshold(e.Threshold)
		if err != nil {
			v.add(field, "%v", err)
			continue
		}
		if th.Target != "" && !s.hasTarget(th.Target) {
			v.add(field, "%q names no target", th.Target)
		}
		if th.RefersToBaseline() && s.CompareTo == nil {
			v.add(field, "refers to baseline.%s but the spec has no compare_to naming the baseline job", th.Baseline)
		}
		v.abort(entry, e, th, s.Sweep.Shards)
	}
}

func (v *validator) webhook(w *Webhook) {
	if w == nil {
		return
	}
	v.url("webhook.url", w.URL)
	seen := make(map[string]bool, len(w.Events))
	for i, e := range w.Events {
		switch {
		case !slices.Contains(WebhookEvents(), e):
			v.add(index("webhook.events", i), "unknown event %q: want %s", e, eventChoices(WebhookEvents()))
		case seen[e]:
			v.add(index("webhook.events", i), "%q is listed twice", e)
		}
		seen[e] = true
	}
}

func (s Spec) hasTarget(name string) bool {
	for _, t := range s.Targets {
		if t.Name == name {
			return true
		}
	}
	return false
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

func validLabelKey(k string) bool {
	if k == "" || len(k) > maxLabelKey {
		return false
	}
	for _, c := range k {
		if !(c < unicode.MaxASCII && (unicode.IsLetter(c) || unicode.IsDigit(c))) && !strings.ContainsRune("_-./", c) {
			return false
		}
	}
	return true
}
