package api

import (
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/benchq/benchq/internal/errcode"
)

// refuseCrossSite is what the open mode asks of a keyless request that
// changes something, so that no web page but benchq's own can make one:
// a browser sends a POST from another site without asking the server
// first only with a form's content type (text/plain, form-urlencoded,
// multipart); any other content type, and any PUT, PATCH or DELETE,
// makes it ask with a CORS preflight, which benchq never grants. So a
// POST must declare JSON. A request that says it comes from another
// origin (Origin, Sec-Fetch-Site) is refused whatever it declares. The
// dashboard's own calls into /v1 are in process and send JSON; its forms
// post to /ui, which checks their origin (session.go).
func refuseCrossSite(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return errcode.New(errcode.CrossSiteRequest, "a web page of another site sent this request (Sec-Fetch-Site): without an API key, benchq takes changes only from its own dashboard and from clients such as curl or the benchq CLI")
	}
	if o := r.Header.Get("Origin"); o != "" && !originIs(o, r.Host) {
		return errcode.New(errcode.CrossSiteRequest, "a web page of another origin sent this request (Origin): without an API key, benchq takes changes only from its own dashboard and from clients such as curl or the benchq CLI")
	}
	if r.Method == http.MethodPost && !isJSON(r.Header.Get("Content-Type")) {
		return errcode.New(errcode.UnsupportedMedia, "without an API key, a POST must say Content-Type: application/json, even one without a body (curl -H 'Content-Type: application/json'): a web page of another site cannot send that without asking first, and benchq never agrees")
	}
	return nil
}

// isJSON reports whether a Content-Type is application/json or a +json
// type; none of them is one a form or a no-cors fetch may send.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// originIs reports whether from (an Origin or Referer) names host; the
// opaque origin "null" names nothing.
func originIs(from, host string) bool {
	u, err := url.Parse(from)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, host)
}
