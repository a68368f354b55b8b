package job

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/benchq/benchq/internal/errcode"
)

func TestDecodeSuggestsTheFieldMeant(t *testing.T) {
	tests := []struct {
		name, body string
		want       []FieldError
	}{
		{"missing letter", `{"sweep": {"concurency": [2]}}`,
			[]FieldError{{Field: "sweep.concurency", Message: `unknown field "concurency"; did you mean "concurrency"?`}}},
		{"swapped letters", `{"targets": [{"ulr": "http://127.0.0.1:1/"}]}`,
			[]FieldError{{Field: "targets[0].ulr", Message: `unknown field "ulr"; did you mean "url"?`}}},
		{"case", `{"Targets": []}`,
			[]FieldError{{Field: "Targets", Message: `unknown field "Targets"; did you mean "targets"?`}}},
		{"underscore", `{"request": {"keep_alive": true}}`,
			[]FieldError{{Field: "request.keep_alive", Message: `unknown field "keep_alive"; did you mean "keepalive"?`}}},
		{"nothing near, few fields", `{"webhook": {"url": "http://127.0.0.1:1/", "secret": "x"}}`,
			[]FieldError{{Field: "webhook.secret", Message: `unknown field "secret"; the fields here are "events", "url"`}}},
		{"nothing near, top level", `{"zzzzzz": 1}`,
			[]FieldError{{Field: "zzzzzz", Message: `unknown field "zzzzzz"; the fields here are "allow_no_success", "baseline", ` +
				`"change_points", "compare_to", "comparisons", "exclusive", "labels", "name", "notify", "request", "search", "stages", "sweep", "targets", "thresholds", "timeline", "trend", "warmup", "webhook"`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tt.body))
			ce, ok := errcode.As(err)
			if !ok {
				t.Fatalf("Decode(%s) = %v, want problems", tt.body, err)
			}
			if diff := cmp.Diff(tt.want, ce.Problems); diff != "" {
				t.Errorf("Decode(%s) problems (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

func TestUnknownFieldMessageListsOnlyFewNames(t *testing.T) {
	many := make([]string, maxListed+1)
	for i := range many {
		many[i] = strings.Repeat(string(rune('a'+i)), 8)
	}
	if got, want := unknownFieldMessage("zzzzzz", many), `unknown field "zzzzzz"`; got != want {
		t.Errorf("unknownFieldMessage(%d names) = %q, want %q", len(many), got, want)
	}
}

func TestNearest(t *testing.T) {
	fields := []string{"concurrency", "duration", "order", "rate", "repeats", "requests", "shards"}
	tests := []struct {
		name, want string
	}{
		{"concurency", "concurrency"},
		{"CONCURRENCY", "concurrency"},
		{"reqeusts", "requests"},
		{"request", "requests"},
		{"rates", "rate"},
		{"x", ""},
		{"ra", ""}, // two edits from a four-letter name is a guess, not a typo
		{"speed", ""},
	}
	for _, tt := range tests {
		got, ok := nearest(tt.name, fields)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("nearest(%q) = %q, %v, want %q", tt.name, got, ok, tt.want)
		}
	}
}

// TestDecodeLenientLeavesTheRestToValidate: unknown fields alone return
// the spec read without them, so its invalid values can be listed with
// them; any other problem is an error as from Decode.
func TestDecodeLenientLeavesTheRestToValidate(t *testing.T) {
	s, unknown, err := DecodeLenient(strings.NewReader(`{"targets": [{"url": "http://127.0.0.1:1/"}],
		"sweep": {"concurency": [2], "requests": [0]}}`))
	if err != nil {
		t.Fatalf("DecodeLenient(unknown field) = %v, want the spec and the unknown field", err)
	}
	if diff := cmp.Diff([]FieldError{{Field: "sweep.concurency", Message: `unknown field "concurency"; did you mean "concurrency"?`}}, unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if got := fields(t, s.Validate(DefaultLimits(), nil)); !cmp.Equal(got, []string{"sweep.requests[0]"}) {
		t.Errorf("Validate(spec read without the unknown field) fields = %v, want [sweep.requests[0]]", got)
	}

	_, unknown, err = DecodeLenient(strings.NewReader(`{"sweep": {"concurency": [2], "requests": ["x"]}}`))
	if got := fields(t, err); unknown != nil || !cmp.Equal(got, []string{"sweep.concurency", "sweep.requests[0]"}) {
		t.Errorf("DecodeLenient(unknown field and wrong type) = %v, %v; want both in the error", unknown, err)
	}
	if _, err := Decode(strings.NewReader(`{"sweep": {"concurency": [2]}}`)); fields(t, err)[0] != "sweep.concurency" {
		t.Errorf("Decode(unknown field) = %v, want it refused", err)
	}
}

func TestDecodeBody(t *testing.T) {
	type inner struct {
		Every Duration `json:"every"`
	}
	type body struct {
		Name   string          `json:"name"`
		Raw    json.RawMessage `json:"raw"`
		Values map[string]int  `json:"values"`
		Inner  *inner          `json:"inner"`
	}
	var b body
	if err := DecodeBody([]byte(`{"name": "a", "raw": {"anything": [1]}, "values": {"x": 1}, "inner": {"every": "1m"}}`), &b); err != nil {
		t.Fatalf("DecodeBody(valid) = %v", err)
	}
	tests := []struct {
		name, body string
		want       []FieldError
	}{
		{"every problem", `{"nmae": "a", "values": {"x": "1"}, "inner": {"evry": "1m"}}`, []FieldError{
			{Field: "nmae", Message: `unknown field "nmae"; did you mean "name"?`},
			{Field: `values["x"]`, Message: "want an integer, got a string"},
			{Field: "inner.evry", Message: `unknown field "evry"; did you mean "every"?`},
		}},
	}
	malformed := []struct{ name, body, want string }{
		{"malformed", "{\n  \"name\": \"a\",\n  \"values\": {\"x\": 1,}\n}",
			`malformed JSON: invalid character '}' looking for beginning of object key string (line 3, column 21)`},
		{"truncated", `{"name": "a"`, "malformed JSON: unexpected end of input (line 1, column 13)"},
	}
	for _, tt := range malformed {
		err := DecodeBody([]byte(tt.body), &body{})
		if ce, ok := errcode.As(err); !ok || ce.Code != errcode.MalformedBody || ce.Message != tt.want || ce.Problems != nil {
			t.Errorf("DecodeBody(%s) = %#v, want the malformed-body message %q alone", tt.name, err, tt.want)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := DecodeBody([]byte(tt.body), &body{})
			ce, ok := errcode.As(err)
			if !ok || ce.Code != errcode.MalformedBody {
				t.Fatalf("DecodeBody(%s) = %v, want a malformed-body error", tt.body, err)
			}
			if diff := cmp.Diff(tt.want, ce.Problems); diff != "" {
				t.Errorf("DecodeBody(%s) problems (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}
