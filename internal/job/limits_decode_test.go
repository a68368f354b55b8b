package job

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
)

// TestDecodeListLimits gives every list and map of a spec one entry more
// than its limit: Decode names the field, the count and the limit; at the
// limit the list decodes.
func TestDecodeListLimits(t *testing.T) {
	list := func(n int, item string) string {
		items := make([]string, n)
		for i := range items {
			items[i] = strings.ReplaceAll(item, "$", fmt.Sprint(i))
		}
		return strings.Join(items, ",")
	}
	const url = `{"url":"http://127.0.0.1:1/"}`
	tests := []struct {
		field string
		limit int
		body  func(n int) string // a spec with n entries in field
	}{
		{"sweep.concurrency", 64, func(n int) string { return `{"sweep":{"concurrency":[` + list(n, "$") + `]}}` }},
		{"sweep.requests", 64, func(n int) string { return `{"sweep":{"requests":[` + list(n, "$") + `]}}` }},
		{"sweep.duration", 64, func(n int) string { return `{"sweep":{"duration":[` + list(n, `"$s"`) + `]}}` }},
		{"sweep.rate", 64, func(n int) string { return `{"sweep":{"rate":[` + list(n, "$") + `]}}` }},
		{"targets", 256, func(n int) string { return `{"targets":[` + list(n, url) + `]}` }},
		{"targets[0].urls", 10000, func(n int) string {
			return `{"targets":[{"http_load":"-fetches 1","urls":[` + list(n, `"http://127.0.0.1:1/$"`) + `]}]}`
		}},
		{"comparisons", 64, func(n int) string { return `{"comparisons":[` + list(n, `{"target":"t$","baseline":"b"}`) + `]}` }},
		{"thresholds", 100, func(n int) string { return `{"thresholds":[` + list(n, `"p$_ms < 1"`) + `]}` }},
		{"labels", 32, func(n int) string { return `{"labels":{` + list(n, `"l$":"v"`) + `}}` }},
		{"request.headers", 100, func(n int) string { return `{"request":{"headers":{` + list(n, `"X-$":"v"`) + `}}}` }},
		{"targets[0].request.headers", 100, func(n int) string {
			return `{"targets":[{"url":"http://127.0.0.1:1/","request":{"headers":{` + list(n, `"X-$":"v"`) + `}}}]}`
		}},
		{"request.tls.cipher_suites", 64, func(n int) string {
			return `{"request":{"tls":{"cipher_suites":[` + list(n, `"S$"`) + `]}}}`
		}},
		{"webhook.events", 16, func(n int) string {
			return `{"webhook":{"url":"http://127.0.0.1:1/","events":[` + list(n, `"e$"`) + `]}}`
		}},
		{"compare_to.labels", 32, func(n int) string { return `{"compare_to":{"labels":{` + list(n, `"l$":"v"`) + `}}}` }},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			if _, err := Decode(strings.NewReader(tt.body(tt.limit))); err != nil {
				t.Errorf("Decode(%d entries in %s) = %v, want the spec", tt.limit, tt.field, err)
			}
			over := tt.limit*10 + 1
			_, err := Decode(strings.NewReader(tt.body(over)))
			var ve *errcode.Error
			if !errors.As(err, &ve) || len(ve.Problems) != 1 {
				t.Fatalf("Decode(%d entries in %s) = %v, want one problem", over, tt.field, err)
			}
			p := ve.Problems[0]
			if p.Field != tt.field || !strings.Contains(p.Message, fmt.Sprintf("has %d ", over)) || !strings.Contains(p.Message, fmt.Sprintf("at most %d are allowed", tt.limit)) {
				t.Errorf("Decode(%d entries in %s) problem = %+v, want the field, the count and the limit", over, tt.field, p)
			}
		})
	}
}

// TestSpecListsHaveLimits keeps a list or map added to the spec from
// going without a maxItems tag of its own.
func TestSpecListsHaveLimits(t *testing.T) {
	seen := map[reflect.Type]bool{}
	var walk func(path string, t reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] {
			return
		}
		seen[typ] = true
		for name, f := range jsonFields(typ) {
			k := f.Type.Kind()
			if (k == reflect.Slice || k == reflect.Map) && f.Tag.Get("maxItems") == "" {
				t.Errorf("%s has no maxItems tag", join(path, name))
			}
			walk(join(path, name), f.Type)
		}
	}
	walk("", specType)
	if len(seen) < 5 {
		t.Fatalf("walked %d struct types, want all of Spec's", len(seen))
	}
}

// TestDecodeDepth refuses a spec nested past maxDepth without recursing
// through it, wherever the nesting is.
func TestDecodeDepth(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	for _, body := range []string{`{"x":` + deep + `}`, `{"targets":[` + deep + `]}`, deep} {
		_, err := Decode(strings.NewReader(body))
		var ve *errcode.Error
		if !errors.As(err, &ve) || len(ve.Problems) != 1 || !strings.Contains(ve.Problems[0].Message, "nested deeper than") {
			t.Errorf("Decode(%.20s...) = %v, want one problem: nested too deep", body, err)
		}
	}
	shallow := `{"x":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`
	if got := fields(t, func() error { _, err := Decode(strings.NewReader(shallow)); return err }()); len(got) != 1 || got[0] != "x" {
		t.Errorf("Decode(%d levels) fields = %q, want [x] (unknown field)", maxDepth, got)
	}
}

// TestProblemsCap keeps the first maxProblems problems and counts the
// rest, holding nothing more for them.
func TestProblemsCap(t *testing.T) {
	var p problems
	const n = 10000
	for i := range n {
		p.add(index("sweep.concurrency", i), "bad value %d", i)
	}
	p.append(FieldError{Field: "x", Message: "one more"})
	if len(p.list) != maxProblems || len(p.seen) > maxProblems {
		t.Errorf("after %d problems: %d kept, %d remembered, want %d of each", n+1, len(p.list), len(p.seen), maxProblems)
	}
	var ve *errcode.Error
	if !errors.As(p.err(), &ve) || len(ve.Problems) != maxProblems+1 {
		t.Fatalf("err() = %v, want %d problems and a count", p.err(), maxProblems)
	}
	if got, want := ve.Problems[maxProblems].Message, fmt.Sprintf("%d more problems not listed", n+1-maxProblems); got != want {
		t.Errorf("last problem = %q, want %q", got, want)
	}
}
