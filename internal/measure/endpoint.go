package measure

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// Endpoint is one URL of a plan split into what a run dials and what ab
// reports about it.
type Endpoint struct {
	Host string // as typed, without IPv6 brackets (ab's "Server Hostname")
	Port int    // from the URL, else the scheme's
	Addr string // host:port, for resolving and dialing
	Path string // path and query (ab's "Document Path")
	TLS  bool   // https
}

// ParseEndpoint checks one plan URL: http or https, a host, a port in
// 1..65535 if one is given.
func ParseEndpoint(raw string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("parse: %w", err)
	}
	var ep Endpoint
	switch u.Scheme {
	case "http":
		ep.Port = 80
	case "https":
		ep.Port, ep.TLS = 443, true
	default:
		return Endpoint{}, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	ep.Host = u.Hostname()
	if ep.Host == "" {
		return Endpoint{}, errors.New("no host")
	}
	if ps := u.Port(); ps != "" {
		port, err := strconv.Atoi(ps)
		if err != nil || port < 1 || port > 65535 {
			return Endpoint{}, fmt.Errorf("port %q is not 1..65535", ps)
		}
		ep.Port = port
	}
	ep.Addr = net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port))
	ep.Path = u.RequestURI()
	return ep, nil
}
