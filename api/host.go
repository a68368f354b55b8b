package api

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/labstack/echo/v4"
)

// hostRule decides which Host values the API answers. A DNS-rebinding
// page reaches a loopback listener under a name its author controls, and
// the browser then treats the API as that page's own origin: the Host
// header, which the browser fills with that name, is what gives it away.
// Host names are checked, never IP literals other than the listener's:
// a name is what an attacker can point at 127.0.0.1.
type hostRule struct {
	// enforced: the all-in-one that may admit keyless requests (until
	// Serve finds its listener beyond loopback), or a server given names.
	enforced atomic.Bool
	// configured: a public URL or allowed hosts were given, so the rule
	// holds whatever the listener.
	configured bool
	names      []hostPort
	publicURL  string
}

// hostPort is one accepted name; an empty port accepts any.
type hostPort struct{ host, port string }

func newHostRule(cfg Config) *hostRule {
	h := &hostRule{publicURL: cfg.PublicURL}
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Hostname() != "" {
		h.names = append(h.names, hostPort{host: strings.ToLower(u.Hostname())})
	}
	for _, a := range cfg.AllowedHosts {
		host, port := splitHost(a)
		h.names = append(h.names, hostPort{host: host, port: port})
	}
	h.configured = len(h.names) > 0
	h.enforced.Store(cfg.OpenUntilFirstKey || h.configured)
	return h
}

// listening drops the check for a listener beyond loopback that was given
// no names: `benchq serve --addr 0.0.0.0:8080` behind a load balancer,
// which needs keys, gets whatever Host the balancer forwards.
func (h *hostRule) listening(addr net.Addr) {
	if !h.configured && !isLoopback(addr) {
		h.enforced.Store(false)
	}
}

// splitHost splits a Host header (or an allowed-hosts entry) into a
// lowercased host without brackets and its port, "" when it has none.
func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h), p
	}
	return strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")), ""
}

// allows reports whether r's Host names this server: a configured name,
// or the address the connection reached (its IP, and for a loopback one
// localhost, 127.0.0.1 and ::1), with that port.
func (h *hostRule) allows(r *http.Request) bool {
	host, port := splitHost(r.Host)
	if host == "" {
		return false
	}
	for _, n := range h.names {
		if n.host == host && (n.port == "" || n.port == port) {
			return true
		}
	}
	local, ok := localAddr(r)
	if !ok {
		return false
	}
	if port == "" {
		port = "80"
		if r.TLS != nil {
			port = "443"
		}
	}
	if port != strconv.Itoa(local.Port) {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.Equal(local.IP) || local.IP.IsLoopback() && (ip.Equal(net.IPv4(127, 0, 0, 1)) || ip.Equal(net.IPv6loopback))
	}
	return host == "localhost" && local.IP.IsLoopback()
}

// localAddr is the address the request's connection reached.
func localAddr(r *http.Request) (*net.TCPAddr, bool) {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	return a, ok && a != nil
}

// probePath reports the health probes, which answer any Host: kubelet and
// load balancers send the pod's or instance's address, and the answers
// carry nothing a page could use.
func probePath(p string) bool { return p == "/healthz" || p == "/readyz" }

// checkHost answers 421 to a request whose Host the rule does not allow.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !s.hosts.enforced.Load() || probePath(r.URL.Path) || s.hosts.allows(r) {
			return next(c)
		}
		return errcode.New(errcode.MisdirectedRequest, s.hosts.advice(r))
	}
}

// advice tells a refused client which addresses it may use instead.
func (h *hostRule) advice(r *http.Request) string {
	var use []string
	if local, ok := localAddr(r); ok {
		use = append(use, "http://"+local.String())
		if local.IP.IsLoopback() {
			use = append(use, "http://localhost:"+strconv.Itoa(local.Port))
		}
	}
	if h.publicURL != "" {
		use = append(use, h.publicURL)
	}
	msg := "this server does not answer for the host this request was sent to (its Host header)"
	if len(use) > 0 {
		msg += ": use " + strings.Join(use, " or ")
	}
	return msg + ", or have the operator add the name to --allowed-hosts (BENCHQ_ALLOWED_HOSTS)"
}
