package measure_test

import (
	"bytes"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchq/benchq/internal/measure"
)

// The stored form must stay what HdrHistogram's own encoder writes, so that
// results stored before and after, and any V2 reader, agree.
func TestEncodeHistogramIsTheReferenceEncoding(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(h *hdrhistogram.Histogram)
	}{
		{"empty", func(*hdrhistogram.Histogram) {}},
		{"one value", func(h *hdrhistogram.Histogram) { _ = h.RecordValue(1234) }},
		{"lowest only", func(h *hdrhistogram.Histogram) { _ = h.RecordValue(1) }},
		{"highest", func(h *hdrhistogram.Histogram) { _ = h.RecordValue(3_600_000_000) }},
		{"spread", func(h *hdrhistogram.Histogram) {
			for i := range int64(100_000) {
				_ = h.RecordValue(1 + i*i%100_000)
			}
		}},
		{"huge counts", func(h *hdrhistogram.Histogram) {
			_ = h.RecordValues(17, 1<<40)
			_ = h.RecordValues(90_000, 1<<57)
			_ = h.RecordValues(91_000, 3)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := measure.NewPhase().Hist
			tc.record(h)
			want, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second time with a reused compressor
				got, err := measure.EncodeHistogram(h)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("EncodeHistogram differs from the reference encoder:\n got %s\nwant %s", got, want)
				}
			}
			back, err := hdrhistogram.Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equals(h) {
				t.Fatal("the encoding does not decode to the histogram")
			}
		})
	}
	if b, err := measure.EncodeHistogram(nil); b != nil || err != nil {
		t.Fatalf("nil histogram: %q, %v; want nil, nil", b, err)
	}
}
