package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// parseHTML parses a report and returns its element nodes in document
// order; html.Parse accepts almost anything, so callers assert structure.
func parseHTML(t *testing.T, doc []byte) []*html.Node {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("HTML does not parse: %v", err)
	}
	var out []*html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode {
			out = append(out, n)
		}
	}
	return out
}

func countTag(nodes []*html.Node, tag string) int {
	n := 0
	for _, e := range nodes {
		if e.Data == tag {
			n++
		}
	}
	return n
}

// TestHTMLReport: one document with the chart inline, a table per sweep
// slice, the verdict's failing cells, one <details> per run, and no
// reference to anything outside the file.
func TestHTMLReport(t *testing.T) {
	doc := render(t, FormatHTML)
	nodes := parseHTML(t, doc)
	for _, tc := range []struct {
		tag  string
		want int
	}{
		{"svg", 1},
		{"style", 1},
		{"script", 0},
		{"link", 0},
		{"img", 0},
		{"table", 5},    // two slices' req/s and latency tables, and the failing cells
		{"details", 24}, // 12 points × 2 repeats
		{"caption", 5},
	} {
		if got := countTag(nodes, tc.tag); got != tc.want {
			t.Errorf("<%s> elements = %d, want %d", tc.tag, got, tc.want)
		}
	}
	for _, e := range nodes {
		for _, a := range e.Attr {
			switch strings.ToLower(a.Key) {
			case "src", "href", "xlink:href", "action", "srcset":
				t.Errorf("<%s %s=%q>: the report must reference nothing", e.Data, a.Key, a.Val)
			}
		}
	}
	for _, text := range []string{"apache vs lighttpd, 25 KB image", "lighttpd vs apache", "Verdict:",
		"verdict-fail", "p99_ms &lt; 200", "Requests per second:", "stops scaling at c=50",
		`<meta name="viewport" content="width=device-width, initial-scale=1">`} {
		if !bytes.Contains(doc, []byte(text)) {
			t.Errorf("HTML lacks %q", text)
		}
	}
	if bytes.Contains(doc, []byte("url(")) || bytes.Contains(doc, []byte("@import")) {
		t.Errorf("the stylesheet fetches something")
	}
}

// TestHTMLHostileNames puts markup in every user-chosen string the report
// prints: the job name, a target's name and a threshold. None of it may
// reach the document as markup.
func TestHTMLHostileNames(t *testing.T) {
	const evil = `<script>alert(1)</script>`
	j := fixtureJob()
	j.Spec.Name = evil + `"><img src=x onerror=alert(2)>`
	j.Spec.Targets[1].Name = evil
	runs := fixtureRuns(j)
	a := fixtureAnalysis(j, runs)
	a.Saturation[0].Sentence = evil
	for i := range a.Verdict.Failures {
		a.Verdict.Failures[i].Threshold = evil
	}
	var buf bytes.Buffer
	if err := Write(&buf, FormatHTML, j, runs, a); err != nil {
		t.Fatal(err)
	}
	nodes := parseHTML(t, buf.Bytes())
	if n := countTag(nodes, "script"); n != 0 {
		t.Errorf("hostile names made %d <script> elements", n)
	}
	if n := countTag(nodes, "img"); n != 0 {
		t.Errorf("hostile names made %d <img> elements", n)
	}
	for _, e := range nodes {
		for _, at := range e.Attr {
			if strings.HasPrefix(strings.ToLower(at.Key), "on") {
				t.Errorf("<%s> carries the handler %s=%q", e.Data, at.Key, at.Val)
			}
		}
	}
	if !strings.Contains(buf.String(), "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the hostile name is not shown escaped")
	}
}

// TestHTMLWideSweepTransposed turns a req/s table of more than
// maxHTMLColumns concurrency levels: one row per level, a column per
// target and per comparison.
func TestHTMLWideSweepTransposed(t *testing.T) {
	tb := Table{Head: []string{"", "c=1", "c=2"}, Rows: [][]string{{"a", "1", "2"}, {"b", "3", "4"}, {"b vs a", "+200 %", "+100 %"}}}
	tb.transpose()
	want := Table{Head: []string{"c", "a", "b", "b vs a"}, Rows: [][]string{{"c=1", "1", "3", "+200 %"}, {"c=2", "2", "4", "+100 %"}}}
	if !slices.Equal(tb.Head, want.Head) || len(tb.Rows) != 2 || !slices.Equal(tb.Rows[0], want.Rows[0]) || !slices.Equal(tb.Rows[1], want.Rows[1]) {
		t.Errorf("transposed = %+v, want %+v", tb, want)
	}
}
