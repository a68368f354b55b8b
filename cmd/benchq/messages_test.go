package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/redistest"
)

// nxResolver answers every name as a DNS server answers a mistyped one,
// so no lookup leaves the machine.
type nxResolver struct{}

func (nxResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "192.0.2.53:53", IsNotFound: true}
}

// TestMessagesForPeople (goPrefix: clierrors_test.go): what a client reads of a mistyped host, a
// mistyped field next to an invalid value, and malformed JSON, through
// the whole service (the real decoder, validation and address policy; a
// stub resolver).
func TestMessagesForPeople(t *testing.T) {
	m := startMainWith(t, nil, func(m *Main) { m.Resolver = nxResolver{} })
	type want struct{ field, says string }
	tests := []struct {
		name, path, body string
		status           int
		detail           string // part of the detail
		errors           []want // each among the errors, by field and part of the message
		not              []string
	}{
		{"mistyped host", "/v1/jobs", `{"targets":[{"url":"http://lcalhost:8080/"}]}`, 422,
			"cannot resolve host 'lcalhost'", []want{{"targets[0].url", "cannot resolve host 'lcalhost'"}},
			[]string{"address policy", "192.0.2.53", "lookup"}},
		{"mistyped host to verify", "/v1/targets/verify", `{"url":"http://lcalhost:8080/"}`, 422,
			"cannot resolve host 'lcalhost'", []want{{"url", "cannot resolve host 'lcalhost'"}},
			[]string{"address policy", "192.0.2.53"}},
		{"unknown field and an invalid value", "/v1/jobs",
			`{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurency":[2],"requests":[0]}}`, 422,
			"2 problems", []want{{"sweep.concurency", `did you mean "concurrency"?`}, {"sweep.requests[0]", "below 1"}}, nil},
		{"malformed JSON", "/v1/jobs", "{\n  \"targets\": [{\"url\": \"http://127.0.0.1:9/\"}]\n  \"name\": \"x\"\n}", 400,
			"(line 3, column 3)", nil, nil},
		{"malformed template", "/v1/templates", `{"name":"a","spec":{"targets":[{"url":"http://127.0.0.1:9/"}]},}`, 400,
			"(line 1, column 64)", nil, []string{"valid JSON:"}},
		{"unknown template field", "/v1/templates", `{"name":"a","spec":{"targets":[{"url":"http://127.0.0.1:9/"}]},"valus":{}}`, 400,
			`did you mean "values"?`, []want{{"valus", `did you mean "values"?`}}, nil},
		{"wrong type to verify", "/v1/targets/verify", `{"url":5}`, 400,
			"want a string, got a number", []want{{"url", "want a string"}}, []string{"Go struct", "VerifyTargetRequest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, b := call(t, http.MethodPost, m.URL()+tt.path, []byte(tt.body))
			var p apiProblem
			if resp.StatusCode != tt.status || json.Unmarshal(b, &p) != nil {
				t.Fatalf("POST %s = %d %s, want %d", tt.path, resp.StatusCode, b, tt.status)
			}
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("detail = %q, want it to say %q", p.Detail, tt.detail)
			}
			for _, w := range tt.errors {
				found := false
				for _, e := range p.Errors {
					found = found || e.Field == w.field && strings.Contains(e.Message, w.says)
				}
				if !found {
					t.Errorf("errors = %+v, want %s saying %q", p.Errors, w.field, w.says)
				}
			}
			texts := []string{p.Detail}
			for _, e := range p.Errors {
				texts = append(texts, e.Message)
			}
			for _, text := range texts {
				if loc := goPrefix.FindString(text); loc != "" {
					t.Errorf("client reads a Go package prefix %q in %q", loc, text)
				}
				for _, n := range tt.not {
					if strings.Contains(text, n) {
						t.Errorf("client reads %q in %q", n, text)
					}
				}
			}
		})
	}
}

// TestMessagesThroughBenchqServe: the real `benchq serve` answers a
// mistyped field next to an invalid value with both, and malformed JSON
// by line and column. (A mistyped host needs the stub resolver of
// TestMessagesForPeople: the process would ask the real DNS.)
func TestMessagesThroughBenchqServe(t *testing.T) {
	rs := redistest.Start(t)
	se := startServe(t, rs.URL())
	base := se.base

	resp, b := call(t, http.MethodPost, base+"/v1/jobs",
		[]byte(`{"targets":[{"url":"http://127.0.0.1:9/"}],"sweep":{"concurency":[2],"requests":[0]}}`))
	var p apiProblem
	if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(b, &p) != nil || len(p.Errors) != 2 ||
		p.Errors[0].Field != "sweep.concurency" || p.Errors[0].Message != `unknown field "concurency"; did you mean "concurrency"?` ||
		p.Errors[1].Field != "sweep.requests[0]" {
		t.Errorf("unknown field and an invalid value = %d %s, want a 422 listing both, with the field meant", resp.StatusCode, b)
	}

	resp, b = call(t, http.MethodPost, base+"/v1/jobs", []byte("{\n  \"targets\": [{\"url\": \"http://127.0.0.1:9/\"}],\n  \"name\": \"x\",\n}"))
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &p) != nil || !strings.Contains(p.Detail, "(line 4, column 1)") {
		t.Errorf("malformed JSON = %d %s, want a 400 naming line 4, column 1", resp.StatusCode, b)
	}
	se.api.Stop(t)
}
