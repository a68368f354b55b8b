package measure

import (
	"strings"
	"testing"
)

func TestFailuresHints(t *testing.T) {
	if h := (Failures{}).Hints(); len(h) != 0 {
		t.Errorf("Hints() of no failures = %q, want none", h)
	}
	f := Failures{Length: 3, PortExhaustion: 1, TLSHandshake: 2, BodyTooLarge: 4, HeaderTooLarge: 5}
	h := f.Hints()
	if len(h) != 5 || !strings.HasPrefix(h[0], "length") || !strings.Contains(h[1], "ip_local_port_range") ||
		!strings.Contains(h[2], "TLS handshake failed") || !strings.Contains(h[3], "max_body") ||
		!strings.Contains(h[4], "8 KiB") {
		t.Errorf("Hints() = %q, want a length hint, the port exhaustion hint, the TLS handshake hint, "+
			"the body and the header size hints", h)
	}
	if f.Total() != 15 {
		t.Errorf("Total() = %d, want 15", f.Total())
	}
	var merged Failures
	merged.Merge(f)
	merged.Merge(f)
	if merged.Total() != 30 || merged.BodyTooLarge != 8 || merged.HeaderTooLarge != 10 {
		t.Errorf("merge of f twice = %+v, want every class doubled", merged)
	}
}
