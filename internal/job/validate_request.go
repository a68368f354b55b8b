package job

import (
	"maps"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/measure"
)

// request checks one set of request options; field is where they came
// from ("request", "targets[1].request", or "targets[1].ab" for flags).
func (v *validator) request(field string, r Request) {
	if !knownMethod(r.Method) {
		v.add(field+".method", "unknown method %q: want GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS", r.Method)
	}
	if r.Body != "" && (r.Method == "GET" || r.Method == "HEAD") {
		v.add(field+".body", "a body cannot be sent with %s: set method to POST, PUT or PATCH", r.Method)
	}
	if len(r.Body) > v.lim.MaxBodyBytes {
		v.add(field+".body", "%d bytes are above the limit of %d", len(r.Body), v.lim.MaxBodyBytes)
	}
	// A timeout bounds one request, not the run: a quota's short run
	// duration must not refuse ab's default 30 s timeout in every job.
	if maxTimeout := max(v.lim.MaxDuration, DefaultTimeout); r.Timeout <= 0 || r.Timeout.Std() > maxTimeout {
		v.add(field+".timeout", "%v is outside (0s, %v]", r.Timeout, maxTimeout)
	}
	if r.MaxBody <= 0 {
		v.add(field+".max_body", "%d is not a positive number of bytes", r.MaxBody)
	}
	v.httpVersion(field, r.HTTPVersion)
	v.maxStreams(field, r)
	_, probs := r.TLS.plan()
	for _, p := range probs {
		v.add(field+".tls."+p.field, "%s", p.msg)
	}
	if hasControl(r.ContentType) {
		v.add(field+".content_type", "%q contains control characters", r.ContentType)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Headers)) {
		if msg := headerProblem(k, r.Headers[k]); msg != "" {
			v.add(field+".headers["+strconv.Quote(k)+"]", "%s", msg)
		}
	}
}

// httpVersion checks the http_version of the request options at field.
func (v *validator) httpVersion(field, hv string) {
	if hv != "" && !measure.KnownHTTPVersion(hv) {
		v.add(field+".http_version", "%q is not %s", hv, measure.HTTPVersionChoices())
	}
}

// maxStreams checks the max_streams of the request options at field.
func (v *validator) maxStreams(field string, r Request) {
	switch {
	case r.MaxStreams < 0 || r.MaxStreams > measure.MaxStreams:
		v.add(field+".max_streams", "%d is outside 1..%d", r.MaxStreams, measure.MaxStreams)
	case r.MaxStreams > 0 && r.HTTPVersion != measure.HTTP2:
		v.add(field+".max_streams", "streams per connection need http_version \"2\"")
	}
}

func knownMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// headerProblem explains why a header cannot be sent as given, or returns
// "". Framing headers are the engine's: a wrong Content-Length or
// Connection would corrupt the measurement rather than test the target.
func headerProblem(name, value string) string {
	if !measure.IsToken(name) {
		return "not a valid header name"
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return "a header value cannot contain CR, LF or NUL"
	}
	switch textproto.CanonicalMIMEHeaderKey(name) {
	case "Content-Length", "Transfer-Encoding":
		return "set by the engine from the body"
	case "Connection", "Keep-Alive":
		return "set by the engine: use keepalive"
	case "Content-Type":
		return "use content_type"
	}
	return ""
}
