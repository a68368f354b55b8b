package job

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// TargetURL is one address a job sends load to, with the spec field it
// came from ("targets[1].url", "targets[0].ab", "targets[2].urls[3]").
type TargetURL struct {
	Field string
	URL   string
	// HostHeaders are the Host headers the load sends to URL instead of
	// the URL's host (request.headers, or ab -H). The load engine sends
	// them as given and uses them as the TLS server name, so a check of
	// the URL's host alone says nothing about where the requests are
	// routed.
	HostHeaders []HostHeader
}

// HostHeader is a Host header of a target's requests and the spec field
// that set it.
type HostHeader struct {
	Field string
	Value string
}

// TargetURLs lists every address the targets of s send load to, in spec
// order, for checks that apply to load and not to webhooks (target
// verification). A target whose form is invalid lists nothing: Validate
// reports it.
func (s Spec) TargetURLs() []TargetURL {
	d, res := s.resolve() // the targets only: the sweep need not be expanded, nor bounded yet
	return (&Planner{spec: d, targets: res}).TargetURLs()
}

// TargetURLs is Spec.TargetURLs.
func (pl *Planner) TargetURLs() []TargetURL {
	var out []TargetURL
	for i, r := range pl.targets {
		if len(r.errs) > 0 {
			continue
		}
		hosts := pl.spec.hostHeaders(i, r.src.req)
		for k, u := range r.src.urls {
			out = append(out, TargetURL{Field: r.src.urlFields[k], URL: u, HostHeaders: hosts})
		}
	}
	return out
}

// hostHeaders lists the Host headers of targets[i]'s effective request,
// named by the field a client would fix. A JSON object may spell the name
// several ways ("Host", "host"): each is one.
func (s Spec) hostHeaders(i int, req Request) []HostHeader {
	t := s.Targets[i]
	var field string
	switch {
	case t.AB != "":
		field = index("targets", i) + ".ab"
	case t.Request != nil:
		field = index("targets", i) + ".request.headers"
	default:
		field = "request.headers"
	}
	var out []HostHeader
	for _, k := range slices.Sorted(maps.Keys(req.Headers)) {
		if !strings.EqualFold(k, "Host") {
			continue
		}
		f := field
		if t.AB == "" {
			f += "[" + strconv.Quote(k) + "]"
		}
		out = append(out, HostHeader{Field: f, Value: req.Headers[k]})
	}
	return out
}
