package loadgen

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"github.com/benchq/benchq/internal/measure"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

// target is one URL of the plan, parsed once, with its request serialized
// once: every worker writes the same read-only bytes, so the hot path neither
// builds nor copies a request.
type target struct {
	addr string         // host:port as in the URL
	ip   netip.AddrPort // addr when host is an IP literal
	host string         // as typed, without IPv6 brackets (ab's "Server Hostname")
	port int
	path string // path and query (ab's "Document Path")
	tls  *tls.Config
	// sniFixed: the plan names the TLS server, so a Host header does not.
	sniFixed bool
	head     bool   // HEAD: responses have no body to read
	req      []byte // the whole request, headers and body
	h2       h2Request

	// addrs are what the run dials, resolved once before its clock starts
	// (resolve.go); cur indexes the one in use. Until a request succeeds
	// a refused connect moves every worker on to the next, as ab does.
	addrs []netip.AddrPort
	cur   *atomic.Int32
}

// parseTarget checks one URL and splits it into what the engine dials and
// reports; the request bytes are added by buildTarget.
func parseTarget(raw string) (target, measure.Endpoint, error) {
	ep, err := measure.ParseEndpoint(raw)
	if err != nil {
		return target{}, ep, err
	}
	t := target{addr: ep.Addr, host: ep.Host, port: ep.Port, path: ep.Path}
	if ip, err := netip.ParseAddr(t.host); err == nil {
		t.ip = netip.AddrPortFrom(ip, uint16(t.port))
	}
	return t, ep, nil
}

// buildTarget parses raw and serializes the request the plan sends to it.
// An https target gets its own copy of the plan's TLS configuration, whose
// server name is the plan's, else the Host header's, else the URL's host.
func buildTarget(p measure.Plan, raw string) (target, error) {
	t, ep, err := parseTarget(raw)
	if err != nil {
		return target{}, err
	}
	if ep.TLS {
		base, err := p.TLS.Config()
		if err != nil {
			return target{}, fmt.Errorf("loadgen: %s: %w", raw, err)
		}
		t.tls = base
		t.sniFixed = t.tls.ServerName != ""
		if !t.sniFixed {
			t.tls.ServerName = t.host
		}
	}
	t.head = p.Method == fasthttp.MethodHead
	if p.HTTPVersion == measure.HTTP10 {
		t.req = abRequest(p, &t)
		return t, nil
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI(raw)
	req.URI() // parse now, so Write sends the origin form "GET /path" with a Host header
	req.Header.SetMethod(p.Method)
	g := given(p.Headers, &t)
	req.UseHostHeader = g.host // sent as given, as ab does
	for _, h := range p.Headers {
		req.Header.Add(h.Key, h.Value)
	}
	if !g.userAgent {
		req.Header.SetUserAgent(p.UserAgent)
	}
	if !g.accept {
		req.Header.Set("Accept", "*/*")
	}
	if len(p.Body) > 0 {
		req.SetBodyRaw(p.Body)
		if !g.contentType {
			req.Header.SetContentType(p.ContentType)
		}
	}
	if !p.KeepAlive {
		// HTTP/1.1 keeps connections alive by default; ab's one connection
		// per request needs the explicit close.
		req.SetConnectionClose()
	}
	if t.req, err = serialize(req); err != nil {
		return target{}, fmt.Errorf("loadgen: build request for %s: %w", raw, err)
	}
	return t, nil
}

// givenHeaders says which of the engine's default headers the plan's own
// replace.
type givenHeaders struct {
	host, userAgent, accept, contentType bool
}

// given scans the plan's headers for the defaults they replace. A Host
// header also names the TLS server of t, as it does for ab.
func given(headers []measure.Header, t *target) givenHeaders {
	var g givenHeaders
	for _, h := range headers {
		switch {
		case strings.EqualFold(h.Key, "Host"):
			g.host = true
			if t.tls != nil && !t.sniFixed {
				t.tls.ServerName = hostOnly(h.Value)
			}
		case strings.EqualFold(h.Key, "User-Agent"):
			g.userAgent = true
		case strings.EqualFold(h.Key, "Accept"):
			g.accept = true
		case strings.EqualFold(h.Key, "Content-Type"):
			g.contentType = true
		}
	}
	return g
}

// abRequest lays out an HTTP/1.0 request as ab 2.3 writes it, so that the
// bytes sent, and the answer a server gives to them, are ab's. A Host
// header in the plan also names the TLS server, as on HTTP/1.1.
func abRequest(p measure.Plan, t *target) []byte {
	var b bytes.Buffer
	line := func(parts ...string) {
		for _, s := range parts {
			b.WriteString(s)
		}
		b.WriteString("\r\n")
	}
	line(p.Method, " ", t.path, " HTTP/1.0")
	if p.KeepAlive {
		// Without it an HTTP/1.0 server closes after the answer: no
		// Connection header is ab's way of asking for one request per
		// connection.
		line("Connection: Keep-Alive")
	}
	lead := p.Headers[:p.LeadingHeaders]
	rest := p.Headers[p.LeadingHeaders:]
	for _, h := range lead {
		line(h.Key, ": ", h.Value)
	}
	if len(p.Body) > 0 {
		// ab's spelling, and ab's rule: its own Content-type even when a
		// header line gives one too.
		line("Content-length: ", strconv.Itoa(len(p.Body)))
		line("Content-type: ", p.ContentType)
	}
	g := given(p.Headers, t)
	for _, h := range rest {
		line(h.Key, ": ", h.Value)
	}
	if !g.host {
		host := t.host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		if t.port != t.defaultPort() {
			host += ":" + strconv.Itoa(t.port)
		}
		line("Host: ", host)
	}
	if !g.userAgent {
		line("User-Agent: ", p.UserAgent)
	}
	if !g.accept {
		line("Accept: */*")
	}
	b.WriteString("\r\n")
	b.Write(p.Body)
	return b.Bytes()
}

// defaultPort is the port a URL of t's scheme names when it names none.
func (t *target) defaultPort() int {
	if t.tls != nil {
		return 443
	}
	return 80
}

func serialize(req *fasthttp.Request) ([]byte, error) {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := req.Write(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// hostOnly strips a port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
