package abreport

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBannerAndHeartbeat replays ab-basic.txt's progress (n = 2000, step
// 200) with progress sampled at uneven points, and compares stdout+stderr
// interleaved as the terminal showed them.
func TestBannerAndHeartbeat(t *testing.T) {
	ref, err := os.ReadFile(filepath.Join("testdata", "reference", "ab-basic.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := string(ref[:strings.Index(string(ref), "Server Software:")])
	var out bytes.Buffer // stdout and stderr share a terminal
	if err := WriteABBanner(&out, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	h := NewHeartbeat(&out, &out, 2000, false)
	steps := []func() error{h.Start,
		func() error { return h.Progress(150) }, func() error { return h.Progress(650) },
		func() error { return h.Progress(650) }, func() error { return h.Progress(1999) },
		func() error { return h.Finish(2000) }}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if got := out.String(); got != want {
		t.Errorf("banner and heartbeat:\n%s\nwant:\n%s", got, want)
	}
}

// TestQuietProgress: ab-post.txt's "(be patient).....done" for n ≤ 150,
// and the same under -q for any n.
func TestQuietProgress(t *testing.T) {
	for _, c := range []struct {
		n     int
		quiet bool
	}{{100, false}, {100000, true}} {
		var stdout, stderr bytes.Buffer
		h := NewHeartbeat(&stdout, &stderr, c.n, c.quiet)
		if err := errors.Join(WriteABBanner(&stdout, "127.0.0.1"), h.Start(), h.Progress(int64(c.n)), h.Finish(int64(c.n))); err != nil {
			t.Fatal(err)
		}
		if got := stdout.String(); !strings.HasSuffix(got, "Benchmarking 127.0.0.1 (be patient).....done\n\n\n") {
			t.Errorf("n=%d quiet=%v: stdout = %q, want the ...done form", c.n, c.quiet, got)
		}
		if stderr.Len() != 0 {
			t.Errorf("n=%d quiet=%v: stderr = %q, want nothing", c.n, c.quiet, stderr.String())
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteErrors: every renderer reports a failed write, wrapped.
func TestWriteErrors(t *testing.T) {
	r := FromMeasurement(richMeasurement(t), Options{})
	m := richMeasurement(t)
	for name, err := range map[string]error{
		"WriteAB":       WriteAB(failingWriter{}, r, TextOptions{}),
		"WriteCSV":      WriteCSV(failingWriter{}, r),
		"WriteGnuplot":  WriteGnuplot(failingWriter{}, m.Samples),
		"WriteHTTPLoad": WriteHTTPLoad(failingWriter{}, r),
		"WriteJSON":     WriteJSON(failingWriter{}, r),
		"WriteABBanner": WriteABBanner(failingWriter{}, "127.0.0.1"),
		"Heartbeat":     NewHeartbeat(failingWriter{}, failingWriter{}, 1000, false).Finish(1000),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "abreport: ") || !strings.HasSuffix(err.Error(), "disk full") {
			t.Errorf("%s(failing writer) = %v, want a wrapped write error", name, err)
		}
	}
}
