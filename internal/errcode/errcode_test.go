package errcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
)

func TestSentinelMatchesItsCode(t *testing.T) {
	notFound := errcode.Sentinel(errcode.NotFound, "not found")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"itself", notFound, true},
		{"wrapped", fmt.Errorf("get job: %w", notFound), true},
		{"same code, own message", errcode.New(errcode.NotFound, "no job j1"), true},
		{"same code, wrapped", fmt.Errorf("x: %w", errcode.Newf(errcode.NotFound, "no job %s", "j1")), true},
		{"other code", errcode.New(errcode.Conflict, "changed"), false},
		{"plain error", errors.New("not found"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, notFound); got != tt.want {
				t.Errorf("errors.Is = %v, want %v", got, tt.want)
			}
		})
	}
	// A non-sentinel matches only itself: two messages of one code are
	// not the same error.
	if a, b := errcode.New(errcode.NotFound, "a"), errcode.New(errcode.NotFound, "b"); errors.Is(a, b) {
		t.Error("a plain coded error matched another of its code")
	}
}

func TestOf(t *testing.T) {
	invalid := errcode.Invalid(errcode.InvalidSpec, []errcode.FieldProblem{{Field: "sweep", Message: "required"}})
	down := errcode.Sentinel(errcode.StoreUnavailable, "store down")
	tests := []struct {
		name     string
		err      error
		override []errcode.Code
		want     errcode.Code
		ok       bool
	}{
		{"none", errors.New("boom"), nil, "", false},
		{"outermost wins", errcode.Wrap(invalid, errcode.TargetUnverified, "not verified"), nil, errcode.TargetUnverified, true},
		{"through fmt", fmt.Errorf("create: %w", invalid), nil, errcode.InvalidSpec, true},
		{"joined", errors.Join(errors.New("x"), invalid), nil, errcode.InvalidSpec, true},
		{"override deep in the tree", errcode.Wrap(fmt.Errorf("verify: %w", errors.Join(errors.New("x"), down)), errcode.TargetUnverified, "not verified"),
			[]errcode.Code{errcode.StoreUnavailable}, errcode.StoreUnavailable, true},
		{"override absent", fmt.Errorf("a: %w", invalid), []errcode.Code{errcode.StoreUnavailable}, errcode.InvalidSpec, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := errcode.Of(tt.err, tt.override...)
			if ok != tt.ok || ok && e.Code != tt.want {
				t.Fatalf("Of = %v, %v; want %q, %v", e, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	one := []errcode.FieldProblem{{Field: "sweep.concurrency[0]", Message: "must be at least 1"}}
	two := append(one, errcode.FieldProblem{Message: "1 more problem"})
	tests := []struct {
		name    string
		err     *errcode.Error
		message string
		text    string
	}{
		{"plain", errcode.New(errcode.NotFound, "no job j1"), "no job j1", "no job j1"},
		{"one field", errcode.Invalid(errcode.InvalidSpec, one), "must be at least 1", "sweep.concurrency[0]: must be at least 1"},
		{"two problems", errcode.Invalid(errcode.InvalidSpec, two), "2 problems in the input", "2 problems in the input: sweep.concurrency[0]: must be at least 1; 1 more problem"},
		{"cause kept for logs", errcode.Wrap(errors.New("dial tcp: refused"), errcode.Unavailable, "webhooks are off"), "webhooks are off", "webhooks are off: dial tcp: refused"},
		{"with field", errcode.New(errcode.BadQuery, "want a number").WithField("limit"), "want a number", "limit: want a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Message != tt.message {
				t.Errorf("Message = %q, want %q", tt.err.Message, tt.message)
			}
			if got := tt.err.Error(); got != tt.text {
				t.Errorf("Error() = %q, want %q", got, tt.text)
			}
		})
	}
}

func TestWithFieldLeavesTheSentinel(t *testing.T) {
	s := errcode.Sentinel(errcode.BadQuery, "bad")
	e := s.WithField("limit")
	if s.Field() != "" || e.Field() != "limit" {
		t.Fatalf("sentinel field %q, copy field %q", s.Field(), e.Field())
	}
	if !errors.Is(e, s) {
		t.Error("the copy no longer matches its sentinel")
	}
	if errors.Is(errcode.New(errcode.BadQuery, "x"), e) {
		t.Error("the copy still matches as a sentinel")
	}
}

func TestLineColumn(t *testing.T) {
	data := []byte("{\n  \"a\": 1,\n  \"b\": x\n}")
	tests := []struct {
		offset, line, col int
	}{
		{0, 1, 1},
		{1, 1, 2},
		{2, 2, 1},
		{19, 3, 8}, // the x
		{len(data), 4, 2},
		{len(data) + 5, 4, 2},
		{-1, 1, 1},
	}
	for _, tt := range tests {
		if line, col := errcode.LineColumn(data, tt.offset); line != tt.line || col != tt.col {
			t.Errorf("LineColumn(%d) = %d, %d, want %d, %d", tt.offset, line, col, tt.line, tt.col)
		}
	}
}
