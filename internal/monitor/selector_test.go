package monitor

import (
	"errors"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		in   string
		want string // String() of the parse; "" means an error
		err  string // part of the error
	}{
		{in: "process_cpu_seconds_total", want: "process_cpu_seconds_total"},
		{in: "  up  ", want: "up"},
		{in: "ns:rule_name", want: "ns:rule_name"},
		{in: `node_cpu_seconds_total{mode!="idle"}`, want: `node_cpu_seconds_total{mode!="idle"}`},
		{in: `node_cpu_seconds_total{ cpu = "0" , mode != "idle" , }`, want: `node_cpu_seconds_total{cpu="0",mode!="idle"}`},
		{in: `x{a=~"b|c",d!~'e.*'}`, want: `x{a=~"b|c",d!~"e.*"}`},
		{in: `x{}`, want: "x"},
		{in: `x{a="say \"hi\"\n"}`, want: `x{a="say \"hi\"\n"}`},
		{in: "", err: "want a metric name"},
		{in: "9lives", err: "want a metric name"},
		{in: `{job="x"}`, err: "want a metric name"},
		{in: "x y", err: "want '{' or the end"},
		{in: `x{a="b"`, err: "want ',' or '}'"},
		{in: `x{a="b"} z`, err: "unexpected text"},
		{in: `x{a:b="c"}`, err: "want one of = != =~ !~"},
		{in: `x{a=b}`, err: "want a quoted value"},
		{in: `x{a="b}`, err: "unterminated"},
		{in: `x{a='\n'}`, err: "cannot hold escapes"},
		{in: `x{a="\q"}`, err: "not a valid quoted string"},
		{in: `x{a=~"("}`, err: "not a regular expression"},
		{in: `x{a=~"` + strings.Repeat("a{1000}", 140) + `"}`, err: "expands to more than"},
		{in: `x{a!~"a{1000}b{1000}c{1000}d{1000}e{1000}"}`, err: "expands to more than"},
		{in: `x{a=~"[0-9]{1,64}|idle"}`, want: `x{a=~"[0-9]{1,64}|idle"}`},
		{in: `x{a=="b"}`, err: "want a quoted value"},
		{in: "x" + strings.Repeat("y", maxSelectorLen), err: "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSelector(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBadSelector) {
					t.Fatalf("ParseSelector(%q) = %v, %v; want an ErrBadSelector containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSelector(%q): %v", tc.in, err)
			}
			if got.String() != tc.want {
				t.Fatalf("ParseSelector(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

func labels(kv ...string) []*dto.LabelPair {
	var out []*dto.LabelPair
	for i := 0; i < len(kv); i += 2 {
		out = append(out, &dto.LabelPair{Name: &kv[i], Value: &kv[i+1]})
	}
	return out
}

func TestSelectorMatches(t *testing.T) {
	tests := []struct {
		sel    string
		labels []string
		want   bool
	}{
		{`x`, []string{"a", "b"}, true},
		{`x{mode!="idle"}`, []string{"mode", "user"}, true},
		{`x{mode!="idle"}`, []string{"mode", "idle"}, false},
		{`x{cpu="0",mode!="idle"}`, []string{"cpu", "1", "mode", "user"}, false},
		{`x{mode=~"user|system"}`, []string{"mode", "system"}, true},
		{`x{mode=~"user|system"}`, []string{"mode", "systemd"}, false}, // anchored
		{`x{mode!~"idle|iowait"}`, []string{"mode", "iowait"}, false},
		{`x{missing=""}`, []string{"a", "b"}, true}, // an absent label is empty, as in PromQL
		{`x{missing!=""}`, []string{"a", "b"}, false},
	}
	for _, tc := range tests {
		sel, err := ParseSelector(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		if got := sel.matches(labels(tc.labels...)); got != tc.want {
			t.Errorf("%s matches %v = %v, want %v", tc.sel, tc.labels, got, tc.want)
		}
	}
}

// FuzzParseSelector: any input parses or fails with ErrBadSelector, never
// panics, and what parses prints as a selector that parses to itself.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{`node_cpu_seconds_total{cpu="0",mode!="idle"}`, `x{a=~"b|c",d!~'e'}`, `x{a="\"\\"}`, "x{", `x{a="`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sel, err := ParseSelector(in)
		if err != nil {
			if !errors.Is(err, ErrBadSelector) {
				t.Fatalf("ParseSelector(%q): %v does not wrap ErrBadSelector", in, err)
			}
			return
		}
		again, err := ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("ParseSelector(%q) printed %q, which does not parse: %v", in, sel.String(), err)
		}
		if again.String() != sel.String() {
			t.Fatalf("round trip of %q: %q then %q", in, sel.String(), again.String())
		}
		sel.matches(labels("a", "b"))
	})
}
