package testservers

import (
	"net/http"
	"testing"
	"time"
)

func TestSpanOverlaps(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		a, b Span
		want bool
	}{
		{"apart", Span{at(0), at(10), 5}, Span{at(20), at(30), 5}, false},
		{"touching is not at once", Span{at(0), at(10), 5}, Span{at(10), at(30), 5}, false},
		{"interleaved", Span{at(0), at(20), 5}, Span{at(10), at(30), 5}, true},
		{"inside", Span{at(0), at(40), 5}, Span{at(10), at(20), 5}, true},
		{"one never served", Span{at(0), at(40), 5}, Span{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, back := tt.a.Overlaps(tt.b), tt.b.Overlaps(tt.a); got != tt.want || back != tt.want {
				t.Errorf("Overlaps = %v, reversed %v; want %v", got, back, tt.want)
			}
		})
	}
}

func TestSpanTargetRecordsPerLoad(t *testing.T) {
	st := StartSpanTarget(t, 0)
	for _, load := range []string{"a", "a", "b"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, st.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(SpanHeader, load)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	a, b := st.Span("a"), st.Span("b")
	if a.Requests != 2 || b.Requests != 1 || a.Last.Before(a.First) || b.First.Before(a.Last) {
		t.Errorf("spans a %+v, b %+v; want 2 then 1 requests, in order", a, b)
	}
}
