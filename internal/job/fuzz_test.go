package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecode checks that no input makes Decode or Validate panic or answer
// with anything but a *errcode.Error, that what they allocate stays
// within allocBound of the input's size, that the strict walk agrees with
// encoding/json on what is JSON, and that a spec that validates survives
// a JSON round trip unchanged and expands into plans the engine accepts.
// The seed corpus is in testdata/fuzz/FuzzDecode, plus the hostile specs
// of the benchmark at 4 KiB (larger ones slow the fuzzer to a crawl).
func FuzzDecode(f *testing.F) {
	for _, data := range hostileSpecs(4 << 10) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, allocated, err := decodeAndValidate(data)
		if bound := allocBound(len(data)); allocated > bound {
			t.Fatalf("Decode and Validate of %d bytes allocated %d bytes, above the bound of %d", len(data), allocated, bound)
		}
		checkAgreesWithEncodingJSON(t, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Decode or Validate error %v is not ErrInvalid", err)
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

// allocBound is what Decode and Validate may allocate for n bytes of spec:
// a multiple of n plus what validating the smallest spec costs. Measured
// (BenchmarkDecodeHostile, and the fuzzer's corpus): refused specs
// allocate 2 to 9 bytes per byte; the costliest valid specs, 256 targets
// of ab lines full of headers, 44 bytes per byte at 460 kB and 61 at
// 79 kB (each header is parsed into a few small values); small valid
// specs at most 66 kB (a certificate being parsed).
func allocBound(n int) uint64 { return 96*uint64(n) + 1<<20 }

// decodeAndValidate does what the API does with a body, and reports the
// bytes allocated meanwhile. The fuzz function runs alone in its process,
// so the delta is its own, give or take a runtime goroutine's crumbs.
func decodeAndValidate(data []byte) (Spec, uint64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := Decode(bytes.NewReader(data))
	if err == nil {
		err = s.Validate(DefaultLimits(), nil)
	}
	runtime.ReadMemStats(&after)
	return s, after.TotalAlloc - before.TotalAlloc, err
}

// checkAgreesWithEncodingJSON asserts that the strict walk calls nothing
// malformed that encoding/json reads, passes nothing it cannot read, and
// that a spec it passes decodes. (It may stop before a syntax error, at
// trailing data or nesting too deep.)
func checkAgreesWithEncodingJSON(t *testing.T, data []byte) {
	err := walkSpec(data)
	var ve *errcode.Error
	malformed := errors.As(err, &ve) && strings.HasPrefix(ve.Problems[0].Message, "malformed JSON")
	if valid := json.Valid(data); valid && malformed || !valid && err == nil {
		t.Fatalf("walkSpec(%q) = %v, but json.Valid = %v", data, err, valid)
	}
	if err != nil {
		return
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("walkSpec passes what encoding/json refuses: %v", err)
	}
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

// FuzzDecodeLenient does what the API does with a spec whose only
// problems are unknown fields, validating it anyway, within Decode's
// allocation bound; without unknown fields it agrees with Decode.
func FuzzDecodeLenient(f *testing.F) {
	for _, data := range hostileSpecs(4 << 10) {
		f.Add(data)
	}
	f.Add([]byte(`{"targets":[{"url":"http://127.0.0.1:1/","verb":"GET"}],"sweep":{"concurency":[2],"requests":[0]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, unknown, err := DecodeLenient(bytes.NewReader(data))
		if err == nil && unknown != nil {
			_ = s.Validate(DefaultLimits(), nil)
		}
		runtime.ReadMemStats(&after)
		if allocated, bound := after.TotalAlloc-before.TotalAlloc, allocBound(len(data)); allocated > bound {
			t.Fatalf("DecodeLenient and Validate of %d bytes allocated %d bytes, above the bound of %d", len(data), allocated, bound)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("DecodeLenient error %v is not ErrInvalid", err)
		}
		_, derr := Decode(bytes.NewReader(data))
		if (err == nil && unknown == nil) != (derr == nil) {
			t.Fatalf("DecodeLenient = %v, %v but Decode = %v", unknown, err, derr)
		}
	})
}
