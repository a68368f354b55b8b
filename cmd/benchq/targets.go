package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// errNotLoopback is returned for a target outside the loopback interface.
var errNotLoopback = errors.New("only loopback targets (127.0.0.0/8, ::1, localhost) are allowed")

// loopbackOnly is the URL policy until internal/netguard lands: a job may
// only aim at this machine's loopback interface, so a benchq reachable by
// others cannot be turned against third parties or the private network.
func loopbackOnly(u *url.URL) error {
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("host %q: %w", host, errNotLoopback)
}
