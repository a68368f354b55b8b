package measure

import "strings"

// Total is the number of failed requests: the sum of every class.
func (f Failures) Total() int64 {
	return f.Connect + f.Receive + f.Length + f.Exceptions + f.Timeout + f.PortExhaustion + f.TLSHandshake +
		f.BodyTooLarge + f.HeaderTooLarge + f.StreamReset + f.GoAway + f.FlowControl + f.Protocol
}

// Hints gives one line of advice per non-zero failure class, in the order of
// the fields, for a report to print under its failure counts.
func (f Failures) Hints() []string {
	var hints []string
	add := func(n int64, hint string) {
		if n > 0 {
			hints = append(hints, hint)
		}
	}
	add(f.Connect, "connect: the target refused or dropped new connections; check that it listens and its backlog (somaxconn)")
	add(f.Receive, "receive: connections were closed or reset mid-response; check the target's logs and limits")
	add(f.Length, "length: response bodies differ in length from the first one; use -l if the document is dynamic")
	add(f.Exceptions, "exceptions: requests could not be written or responses were not valid HTTP")
	add(f.Timeout, "timeout: requests took longer than the timeout (-s); raise it or lower the load")
	add(f.PortExhaustion, "port exhaustion: no local port left for a new connection; use keep-alive (-k) or widen net.ipv4.ip_local_port_range")
	add(f.TLSHandshake, "tls handshake: the TLS handshake failed; the port may not speak TLS (use http://) or accept none of Go's TLS versions and ciphers")
	add(f.BodyTooLarge, "body too large: response bodies exceeded the body size cap and were cut; raise it (--max-body, request.max_body) if they are meant to be that long")
	add(f.HeaderTooLarge, "header too large: response headers exceeded 8 KiB, ab's limit too; check the target's headers and cookies")
	add(f.StreamReset, "stream reset: the server reset HTTP/2 streams (RST_STREAM, codes in h2_error_codes); check its stream and request limits")
	add(f.GoAway, "goaway: the server closed HTTP/2 connections (GOAWAY) with requests unprocessed; check its keepalive_requests or max requests per connection")
	add(f.FlowControl, "flow control: request bodies waited on a zero HTTP/2 window until the timeout; the server stopped reading them")
	add(f.Protocol, "protocol: HTTP/2 protocol errors; the server may not speak HTTP/2 on this port (h2c needs prior-knowledge support, https needs ALPN h2)")
	return hints
}

// Merge adds o's counts to f.
func (f *Failures) Merge(o Failures) {
	f.Connect += o.Connect
	f.Receive += o.Receive
	f.Length += o.Length
	f.Exceptions += o.Exceptions
	f.Timeout += o.Timeout
	f.PortExhaustion += o.PortExhaustion
	f.TLSHandshake += o.TLSHandshake
	f.BodyTooLarge += o.BodyTooLarge
	f.HeaderTooLarge += o.HeaderTooLarge
	f.StreamReset += o.StreamReset
	f.GoAway += o.GoAway
	f.FlowControl += o.FlowControl
	f.Protocol += o.Protocol
}

// Hints is Failures.Hints with the TLS handshake hint replaced by one per
// reason (TLSFailures.Hints) when the reasons are known: the generic one
// guesses what they name.
func (m *Measurement) Hints() []string {
	hints := m.Failures.Hints()
	if m.TLSFailures.IsZero() {
		return hints
	}
	out := hints[:0]
	for _, h := range hints {
		if !strings.HasPrefix(h, "tls handshake: ") {
			out = append(out, h)
		}
	}
	return append(out, m.TLSFailures.Hints()...)
}
