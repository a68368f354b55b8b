package job

import (
	"net/url"
	"slices"

	"github.com/benchq/benchq/internal/netguard"
)

// IsExclusive reports whether the job must have its target hosts to
// itself while it runs: true unless the spec says "exclusive": false (a
// spec stored before the field existed has none, and is exclusive). A
// job that is not shares its hosts with other such jobs only.
func (s Spec) IsExclusive() bool { return s.Exclusive == nil || *s.Exclusive }

// TargetHosts lists the distinct host:port addresses the job's targets
// send load to, as written in their URLs, sorted: the host lowercased,
// the port the scheme's default (80, 443) when none is given, an IPv6
// host in brackets. It is what an exclusive job holds while it runs.
// Names are not resolved: "localhost:8080" and "127.0.0.1:8080" are two
// hosts, so jobs meant to exclude each other must name a host alike.
// Host headers do not count: they route requests behind the address, but
// the address is what takes the load. A URL that does not parse is left
// out (Validate refuses it).
func (s Spec) TargetHosts() []string {
	var out []string
	for _, t := range s.TargetURLs() {
		if h, ok := hostPort(t.URL); ok {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hostPort normalizes one target URL's address as the address policy
// names hosts.
func hostPort(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", false
	}
	h, err := netguard.URLHostPort(u)
	return h, err == nil
}
