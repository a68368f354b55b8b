package abreport

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/measure"
	"github.com/google/go-cmp/cmp"
)

// abRun is the counters of one captured ab 2.3 run in testdata/reference
// (copied from ../shared/reference): nginx 1.22.1 on 127.0.0.1:28080.
// elapsedUs is the one whole-µs time that reproduces every rate ab printed.
type abRun struct {
	file              string
	path              string
	docLen            int64
	concurrency       int
	elapsedUs         int64
	complete          int64
	keepAlive         bool
	non2xx            int64
	total, html, sent int64
	bodySent          bool
}

func abRuns() []abRun {
	return []abRun{
		{file: "ab-basic.txt", path: "/test.jpg", docLen: 25600, concurrency: 10, elapsedUs: 72316,
			complete: 2000, total: 51674000, html: 51200000},
		{file: "ab-keepalive.txt", path: "/test.html", docLen: 49128, concurrency: 50, elapsedUs: 29595,
			complete: 2000, keepAlive: true, total: 98738000, html: 98256000},
		{file: "ab-non2xx.txt", path: "/missing.html", docLen: 153, concurrency: 5, elapsedUs: 16144,
			complete: 500, non2xx: 500, total: 151500, html: 76500},
		{file: "ab-post.txt", path: "/small.html", docLen: 157, concurrency: 2, elapsedUs: 5615,
			complete: 100, non2xx: 100, total: 30900, html: 15700, sent: 165700, bodySent: true},
		{file: "ab-timelimit.txt", path: "/small.html", docLen: 7638, concurrency: 4, elapsedUs: 759887,
			complete: 50000, keepAlive: true, total: 393900000, html: 381900000},
	}
}

// measurement builds the run's Measurement with sub-ms timings, as on
// loopback: 0 or 1 ms once rounded, so every table cell has ab's width.
func (a abRun) measurement(t *testing.T) *measure.Measurement {
	m := &measure.Measurement{
		ServerSoftware: "nginx/1.22.1", ServerHostname: "127.0.0.1", ServerPort: 28080,
		DocumentPath: a.path, DocumentLength: a.docLen, Concurrency: a.concurrency,
		KeepAlive: a.keepAlive, Method: "GET", Started: started(),
		Elapsed: time.Duration(a.elapsedUs) * time.Microsecond,
		Non2xx:  a.non2xx, TotalReceivedBytes: a.total, BodyReceivedBytes: a.html, TotalSentBytes: a.sent,
	}
	if a.bodySent {
		m.Method = "POST"
	}
	code := 200
	if a.non2xx > 0 {
		code = 404
	}
	m.StatusCodes = map[int]int64{code: a.complete}
	if a.keepAlive {
		m.KeepAliveRequests = a.complete
	}
	reqs := make([]req, a.complete)
	for i := range reqs {
		reqs[i] = req{connect: 60 + int64(i%4)*40, waiting: 120 + int64(i%3)*50, processing: 170 + int64(i%3)*50}
	}
	reqs[len(reqs)-1].processing = 900 // one slow request: max and 100 % are 1 ms
	withRequests(t, m, reqs, false)
	return m
}

var digits = regexp.MustCompile(`[0-9][0-9.]*`)

// reportPart is ab's report body: from "Server Software:" to the end.
func reportPart(t *testing.T, text string) []string {
	t.Helper()
	i := strings.Index(text, "Server Software:")
	if i < 0 {
		t.Fatal("no report in the reference file")
	}
	return strings.Split(strings.TrimRight(text[i:], "\n"), "\n")
}

func mask(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = digits.ReplaceAllString(l, "N")
	}
	return out
}

// TestWriteABMatchesRealAB renders each captured run's counters and compares
// the report with ab's own line by line: with digits masked over the whole
// report (labels, order, spacing, conditional lines), and exactly up to the
// Connection Times table, whose counters and rates it reproduces.
func TestWriteABMatchesRealAB(t *testing.T) {
	for _, run := range abRuns() {
		t.Run(run.file, func(t *testing.T) {
			ref, err := os.ReadFile(filepath.Join("testdata", "reference", run.file))
			if err != nil {
				t.Fatal(err)
			}
			want := reportPart(t, string(ref))
			r := FromMeasurement(run.measurement(t), Options{BodySent: run.bodySent})
			got := reportPart(t, string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) })))
			if diff := cmp.Diff(mask(want), mask(got)); diff != "" {
				t.Errorf("masked report differs from ab's (-ab +ours):\n%s", diff)
			}
			head := func(lines []string) []string {
				for i, l := range lines {
					if l == "Connection Times (ms)" {
						return lines[:i]
					}
				}
				return lines
			}
			if diff := cmp.Diff(head(want), head(got)); diff != "" {
				t.Errorf("report head differs from ab's (-ab +ours):\n%s", diff)
			}
		})
	}
}

// TestWriteABColumn25 checks that every "Label:" line puts its value in
// column 25, as ab pads its labels.
func TestWriteABColumn25(t *testing.T) {
	r := FromMeasurement(richMeasurement(t), Options{BodySent: true})
	text := string(render(t, func(b *bytes.Buffer) error { return WriteAB(b, r, TextOptions{}) }))
	label := regexp.MustCompile(`^[A-Z][A-Za-z0-9/ -]*: +`)
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Connect:") || strings.HasPrefix(line, "Processing:") ||
			strings.HasPrefix(line, "Waiting:") || strings.HasPrefix(line, "Total:") ||
			strings.HasPrefix(line, "ERROR:") || strings.HasPrefix(line, "WARNING:") {
			continue // table rows and warnings have their own layout
		}
		if m := label.FindString(line); m != "" {
			n++
			if len(m) != 24 {
				t.Errorf("value of %q starts in column %d, want 25", line, len(m)+1)
			}
		}
		if strings.HasPrefix(line, "                        ") && len(strings.TrimLeft(line, " ")) > 0 {
			n++
			if got := len(line) - len(strings.TrimLeft(line, " ")); got != 24 {
				t.Errorf("continuation %q starts in column %d, want 25", line, got+1)
			}
		}
	}
	if n < 20 {
		t.Errorf("checked %d labelled lines, want at least 20", n)
	}
}
