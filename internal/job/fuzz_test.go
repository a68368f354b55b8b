package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecode checks that no input makes Decode or Validate panic or answer
// with anything but a *ValidationError, and that a spec that validates
// survives a JSON round trip unchanged and expands into plans the engine
// accepts. The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode error %v is not ErrInvalid", err)
			}
			return
		}
		if err := s.Validate(DefaultLimits(), nil); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate error %v is not ErrInvalid", err)
			}
			return
		}
		encoded, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("Marshal(valid spec) = %v", err)
		}
		again, err := Decode(bytes.NewReader(encoded))
		if err != nil {
			t.Fatalf("Decode(Marshal(valid spec)) = %v\n%s", err, encoded)
		}
		if diff := cmp.Diff(s, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round trip changed the spec (-before +after):\n%s", diff)
		}
		checkExpansion(t, s)
	})
}

// checkExpansion asserts what a worker relies on for a valid spec.
func checkExpansion(t *testing.T, s Spec) {
	d := s.WithDefaults()
	if err := d.Validate(DefaultLimits(), nil); err != nil {
		t.Fatalf("Validate(WithDefaults(valid spec)) = %v", err)
	}
	points := s.Points()
	if len(points) == 0 {
		t.Fatalf("valid spec has no points")
	}
	if got, want := len(s.Schedule()), len(points)*d.Sweep.Repeats; got != want {
		t.Fatalf("len(Schedule()) = %d, want %d", got, want)
	}
	if s.Estimate() <= 0 {
		t.Fatalf("Estimate() = %v, want > 0", s.Estimate())
	}
	for i, p := range points {
		if p.Index != i {
			t.Fatalf("Points()[%d].Index = %d", i, p.Index)
		}
		plan, err := s.Plan(p)
		if err != nil {
			t.Fatalf("Plan(%+v) = %v", p, err)
		}
		if err := plan.Validate(); err != nil {
			t.Fatalf("loadgen refuses Plan(%+v): %v", p, err)
		}
	}
}
