package abreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestClientSaturation checks the client fields in the JSON and that a
// CPU-bound run's text reports are the unsaturated ones plus exactly one
// warning line at the end, so ab and http_load parsers read them as
// before.
func TestClientSaturation(t *testing.T) {
	m := richMeasurement(t)
	calm := FromMeasurement(m, Options{BodySent: true})
	// 2.5 s × min(2 cores, c 8) = 5 CPU-s available; 4.4 + 0.2 is 92 %.
	m.ClientCPU, m.ClientCPUWait = 4400*time.Millisecond, 200*time.Millisecond
	hot := FromMeasurement(m, Options{BodySent: true})

	var fields struct {
		CPU       *float64 `json:"client_cpu_s"`
		Wait      *float64 `json:"client_cpu_wait_s"`
		Cores     *int     `json:"client_cores"`
		Saturated *bool    `json:"client_saturated"`
	}
	if err := json.Unmarshal(render(t, func(b *bytes.Buffer) error { return WriteJSON(b, hot) }), &fields); err != nil {
		t.Fatal(err)
	}
	if fields.CPU == nil || *fields.CPU != 4.4 || fields.Wait == nil || *fields.Wait != 0.2 ||
		fields.Cores == nil || *fields.Cores != 2 || fields.Saturated == nil || !*fields.Saturated {
		t.Errorf("JSON client fields = %v %v %v %v, want 4.4, 0.2, 2, true", deref(fields.CPU), deref(fields.Wait), deref(fields.Cores), deref(fields.Saturated))
	}
	if calm.ClientSaturated || calm.ClientWarning() != "" {
		t.Errorf("1.25 of 5 CPU-s: saturated %v, warning %q; want neither", calm.ClientSaturated, calm.ClientWarning())
	}

	const warning = "WARNING: the load generator was short of CPU (4.40 CPU-s used + 0.20 s waiting for a CPU, of 5.00 available): req/s measures the client, not the server\n"
	renderers := []struct {
		name  string
		write func(*bytes.Buffer, *Report) error
	}{
		{"ab", func(b *bytes.Buffer, r *Report) error { return WriteAB(b, r, TextOptions{}) }},
		{"ab -d", func(b *bytes.Buffer, r *Report) error { return WriteAB(b, r, TextOptions{NoPercentiles: true}) }},
		{"http_load", func(b *bytes.Buffer, r *Report) error { return WriteHTTPLoad(b, r) }},
	}
	for _, c := range renderers {
		t.Run(c.name, func(t *testing.T) {
			before := string(render(t, func(b *bytes.Buffer) error { return c.write(b, calm) }))
			after := string(render(t, func(b *bytes.Buffer) error { return c.write(b, hot) }))
			if after != before+warning {
				rest, _ := strings.CutPrefix(after, before)
				t.Errorf("saturated report = the unsaturated one + %q, want + %q", rest, warning)
			}
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return "missing"
	}
	return *p
}
