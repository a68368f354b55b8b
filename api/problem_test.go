package api

import (
	"testing"

	"github.com/benchq/benchq/internal/errcode"
)

// TestEveryCodeHasAProblemType keeps the table from codes to problems
// whole: a code without a row would reach clients as a 500.
func TestEveryCodeHasAProblemType(t *testing.T) {
	seen := map[string]errcode.Code{}
	for _, code := range errcode.Codes() {
		pt, ok := problemTypes[code]
		if !ok {
			t.Errorf("code %q has no problem type", code)
			continue
		}
		if pt.status < 400 || pt.title == "" {
			t.Errorf("code %q: status %d, title %q", code, pt.status, pt.title)
		}
		p, internal, _ := problemFor(errcode.New(code, "a message for the client"))
		if internal || p.Status != pt.status {
			t.Errorf("code %q answered %d (internal %v), want %d", code, p.Status, internal, pt.status)
		}
		if other, dup := seen[p.Type]; dup && !(code == errcode.InvalidCursor || other == errcode.InvalidCursor) {
			t.Errorf("codes %q and %q share problem type %s", code, other, p.Type)
		}
		seen[p.Type] = code
	}
	if len(problemTypes) != len(errcode.Codes()) {
		t.Errorf("%d problem types for %d codes", len(problemTypes), len(errcode.Codes()))
	}
}
