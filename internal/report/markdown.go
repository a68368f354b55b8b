package report

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/analysis"
	"github.com/benchq/benchq/internal/job"
)

// writeMarkdown writes the seeds/003 layout as GitHub-flavoured Markdown:
// per requests/duration/rate value a heading and a table whose rows are
// the targets and whose columns are the concurrency levels, cells the mean
// req/s over repeats; with a baseline, one "X vs baseline" row per other
// target with the difference in percent; a cell whose load generator was
// short of CPU is marked, with a legend under its table. Then the
// saturation sentences, the capacity search, the comparison, the runs a
// threshold aborted and the verdict.
func writeMarkdown(w io.Writer, j *job.Job, runs []job.Run, a job.Analysis) error {
	bw := bufio.NewWriter(w)
	g := newGrid(a)
	fmt.Fprintf(bw, "# %s\n\n", mdEscape(title(j)))
	fmt.Fprintf(bw, "Job `%s`, %s. Cells are mean successful requests per second over %s.\n",
		j.ID, j.Status, plural(j.Spec.Sweep.Repeats, "repeat"))
	if len(g.Slices) == 0 {
		fmt.Fprint(bw, "\nNo runs yet.\n")
	}
	for _, s := range g.Slices {
		fmt.Fprintf(bw, "\n## %s\n\n", s.Label())
		writeMDTable(bw, g, s, j.Spec.ComparisonPairs())
		writeMDLatency(bw, g, s)
		writeMDTLS(bw, g, s)
	}
	writeMDSaturation(bw, a.Saturation)
	writeMDCapacity(bw, j.ID, a.CapacitySentence, a.Capacity) // capacity.go
	writeMDCompareTo(bw, a.CompareTo)
	writeMDAborted(bw, j, runs) // aborted.go
	writeMDVerdict(bw, a.Verdict, j.Spec.Points())
	// The helpers print into bw, whose first error sticks and is returned
	// here; their Fprintf errors are therefore not checked.
	return bw.Flush()
}

// title names the job: its name, or its id when it has none.
func title(j *job.Job) string {
	if j.Spec.Name != "" {
		return j.Spec.Name
	}
	return "benchq job " + j.ID
}

func writeMDTable(w io.Writer, g grid, s slice, pairs []job.ComparisonPair) {
	conc := g.Conc[s]
	head, rule := []string{""}, []string{"---"}
	for _, c := range conc {
		head = append(head, concLabel(c))
		rule = append(rule, "---:")
	}
	mdRow(w, head)
	mdRow(w, rule)
	var cells []*job.PointSummary
	for _, t := range g.Targets {
		row := []string{mdEscape(t)}
		for _, c := range conc {
			ps := g.Cell(s, t, c)
			row = append(row, rpsCell(ps))
			cells = append(cells, ps)
		}
		mdRow(w, row)
	}
	if rows := comparisonRows(g, s, pairs); len(rows) > 0 {
		for _, r := range rows {
			r[0] = mdEscape(r[0])
			mdRow(w, r)
		}
		fmt.Fprintf(w, "\n%s\n", noiseNote)
	}
	for _, n := range cellNotes(cells) {
		fmt.Fprintf(w, "\n%s\n", n)
	}
}

// mdLatencyPercents are the latency columns of the percentile table: the
// body and the tail, up to what the histogram answers past ab's 99.
func mdLatencyPercents() []string { return []string{"50", "90", "99", "99.9", "99.99"} }

// writeMDLatency writes latencyTable as Markdown.
func writeMDLatency(w io.Writer, g grid, s slice) {
	head, rows := latencyTable(g, s)
	fmt.Fprint(w, "\nLatency percentiles, mean ms over repeats, and errors:\n\n")
	rule := []string{"---"}
	for range head[1:] {
		rule = append(rule, "---:")
	}
	mdRow(w, head)
	mdRow(w, rule)
	for _, r := range rows {
		r[0] = mdEscape(r[0])
		mdRow(w, r)
	}
}

// latencyTable is each target's latency percentiles per concurrency, means
// over repeats in ms ("–" where nothing was measured), and the share of
// its requests that were errors: one row per point that ran.
func latencyTable(g grid, s slice) (head []string, rows [][]string) {
	head = []string{"target", "c"}
	for _, pc := range mdLatencyPercents() {
		head = append(head, "p"+pc)
	}
	head = append(head, "errors")
	for _, t := range g.Targets {
		for _, c := range g.Conc[s] {
			ps := g.Cell(s, t, c)
			if ps == nil || ps.Runs == 0 {
				continue
			}
			row := []string{t, strconv.Itoa(c)}
			for _, pc := range mdLatencyPercents() {
				cell := "–"
				if st, ok := ps.PercentilesMs[pc]; ok && st.N > 0 {
					cell = fmt.Sprintf("%.2f", st.Mean)
				}
				row = append(row, cell)
			}
			errs := "none"
			if ps.ErrorRatio.Mean > 0 {
				errs = errorShare(ps.ErrorRatio.Mean)
			}
			rows = append(rows, append(row, errs))
		}
	}
	return head, rows
}

// writeMDTLS lists each point's TLS handshake time and failed handshakes
// by reason, when any point of the slice spoke TLS.
func writeMDTLS(w io.Writer, g grid, s slice) {
	var rows [][]string
	for _, t := range g.Targets {
		for _, c := range g.Conc[s] {
			ps := g.Cell(s, t, c)
			if ps == nil || (ps.TLSHandshakeMs == nil && ps.TLSFailures == nil) {
				continue
			}
			hs := "–"
			if st := ps.TLSHandshakeMs; st != nil && st.N > 0 {
				hs = fmt.Sprintf("%.2f", st.Mean)
			}
			rows = append(rows, []string{mdEscape(t), strconv.Itoa(c), hs, tlsFailureCell(ps.TLSFailures)})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprint(w, "\nTLS handshake (a part of connect), mean ms over repeats, and failed handshakes:\n\n")
	mdRow(w, []string{"target", "c", "handshake", "failed handshakes"})
	mdRow(w, []string{"---", "---:", "---:", "---"})
	for _, r := range rows {
		mdRow(w, r)
	}
}

// tlsFailureCell names the reasons of failed handshakes with their counts.
func tlsFailureCell(f *abreport.TLSFailures) string {
	if f == nil {
		return "none"
	}
	var parts []string
	for _, r := range []struct {
		name string
		n    int64
	}{{"unknown authority", f.UnknownAuthority}, {"bad certificate", f.BadCertificate},
		{"client certificate refused", f.ClientCertificate}, {"protocol version", f.ProtocolVersion},
		{"handshake failure", f.HandshakeFailure}, {"not TLS", f.NotTLS}, {"other", f.Other}} {
		if r.n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", r.name, r.n))
		}
	}
	return strings.Join(parts, ", ")
}

// clientMark follows a cell whose point was client-bound
// (job.PointSummary.ClientSaturated); the legend under the table says so.
const clientMark = "†"

func clientBound(ps *job.PointSummary) bool { return ps != nil && ps.Runs > 0 && ps.ClientSaturated }

// comparisonRows are the "X vs Y" rows of a slice's req/s table, one per
// comparison pair whose two targets both ran in the job.
func comparisonRows(g grid, s slice, pairs []job.ComparisonPair) [][]string {
	var rows [][]string
	for _, p := range pairs {
		if !hasTarget(g, p.Target) || !hasTarget(g, p.Baseline) {
			continue
		}
		row := []string{p.Target + " vs " + p.Baseline}
		for _, c := range g.Conc[s] {
			row = append(row, comparisonCell(g.Cell(s, p.Target, c), p.Baseline))
		}
		rows = append(rows, row)
	}
	return rows
}

// noiseNote explains the "~" and p-values of a comparison under its table.
var noiseNote = fmt.Sprintf("Differences are the change of the mean over the repeats with its %.0f %% confidence interval and p-value (a t test on the logarithms of the repeats' values: pooled when both sides have as many repeats, Welch's otherwise; it needs %d repeats per side). \"~\" marks an interval that holds 0, or a difference that is not significant once the false discovery rate over all of a job's comparisons is held at %.0f %% (Benjamini-Hochberg). With 4 or more repeats per side the JSON also gives the Mann-Whitney U test's p (p_u), which assumes nothing of the distribution.", (1-analysis.SignificanceAlpha)*100, analysis.MinRepeatsForSignificance(), analysis.SignificanceAlpha*100)

func hasTarget(g grid, name string) bool {
	for _, t := range g.Targets {
		if t == name {
			return true
		}
	}
	return false
}

// rpsCell is a point's throughput as a reader means it: the successful
// requests per second, with the share of errors beside it when there were
// any, and no number at all when nothing succeeded (ab's req/s counts a
// 500 as a request served). Marks: clientMark, noisyMark; then the
// server's CPU where its monitor told it.
func rpsCell(ps *job.PointSummary) string {
	if ps == nil || ps.Runs == 0 {
		return "–"
	}
	var cell string
	switch {
	case noSuccess(ps):
		cell = "no success (" + errorShare(ps.ErrorRatio.Mean) + " errors)"
	case ps.ErrorRatio.Mean > 0:
		cell = fmt.Sprintf("%.2f (%s errors)", ps.GoodRPS.Mean, errorShare(ps.ErrorRatio.Mean))
	default:
		cell = fmt.Sprintf("%.2f", ps.GoodRPS.Mean)
	}
	if clientBound(ps) {
		cell += " " + clientMark
	}
	if noisy(ps) {
		cell += " " + noisyMark
	}
	if ps.Unsteady > 0 {
		cell += " " + unsteadyMark
	}
	if cpu := serverCPUCell(ps); cpu != "" { // server.go
		cell += ", " + cpu
	}
	return cell
}

// noSuccess reports whether no request of the point's runs succeeded.
func noSuccess(ps *job.PointSummary) bool { return ps.GoodRPS.N > 0 && ps.GoodRPS.Max == 0 }

// noisyMark follows a cell whose req/s varied by more than analysis.NoisyCV over
// its repeats; the legend under the table says so.
const noisyMark = "‡"

// unsteadyMark follows a cell with a repeat whose throughput or latency
// shifted while it ran (job.PointSummary.Unsteady); the legend under the
// table gives the count and the first one's reason.
const unsteadyMark = "§"

func noisy(ps *job.PointSummary) bool { return ps != nil && ps.Runs > 1 && ps.Noisy && !noSuccess(ps) }

// errorShare writes a share of errors in percent, never rounding a real
// error away to 0.
func errorShare(r float64) string {
	if p := r * 100; p < 0.1 {
		return "<0.1 %"
	} else if p < 10 {
		return fmt.Sprintf("%.1f %%", p)
	} else {
		return fmt.Sprintf("%.0f %%", p)
	}
}

// cellNotes are the legends a table of rpsCells needs, one per mark or
// annotation that appears in it.
func cellNotes(cells []*job.PointSummary) []string {
	var errs, client, noise, cpu bool
	var unsteady, busy []string
	for _, ps := range cells {
		if ps == nil || ps.Runs == 0 {
			continue
		}
		errs = errs || ps.ErrorRatio.Mean > 0
		client = client || clientBound(ps)
		noise = noise || noisy(ps)
		cpu = cpu || serverCPUCell(ps) != ""
		if ps.BusyStarts > 0 {
			busy = append(busy, fmt.Sprintf("%s at c=%d: %d of %s", ps.Point.Target, ps.Point.Concurrency, ps.BusyStarts, plural(ps.Runs, "run")))
		}
		if ps.Unsteady > 0 {
			unsteady = append(unsteady, fmt.Sprintf("%s at c=%d: %d of %s, e.g. %s", ps.Point.Target, ps.Point.Concurrency, ps.Unsteady, plural(ps.Runs, "run"), ps.UnsteadyReason))
		}
	}
	var notes []string
	if errs {
		notes = append(notes, "Errors: the share of requests that failed or were not 2xx; the number beside them counts successes only.")
	}
	if client {
		notes = append(notes, clientMark+" the load generator was short of CPU in at least one repeat: that req/s measures the client, not the server.")
	}
	if noise {
		notes = append(notes, fmt.Sprintf("%s noisy: req/s varied by more than %.0f %% (coefficient of variation) over the repeats; rerun, or add repeats, before trusting a difference.", noisyMark, analysis.NoisyCV*100))
	}
	if cpu {
		notes = append(notes, serverNote())
	}
	if len(busy) > 0 {
		notes = append(notes, "Began on a busy server: the wait for a quiet server (sweep.settle) ran out, so these runs may have measured what an earlier run left queued ("+strings.Join(busy, "; ")+").")
	}
	if len(unsteady) > 0 {
		notes = append(notes, unsteadyMark+" unsteady: throughput or latency shifted during a run, so its averages mix two behaviours ("+strings.Join(unsteady, "; ")+").")
	}
	return notes
}

// plural writes n with its noun, "1 run", "3 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func comparisonCell(ps *job.PointSummary, baseline string) string {
	if ps == nil {
		return "–"
	}
	c := ps.ComparisonWith(baseline)
	if c == nil {
		return "–"
	}
	return sigText(c.RPSSignificance, c.RPS)
}

// sigText is a difference with its significance; an analysis stored
// before comparisons were tested has none, and shows the bare percentage.
func sigText(s job.Significance, bare string) string {
	if s.Text == "" {
		return bare
	}
	return s.Text
}

// mdRow writes one table row; an empty first cell (the corner of the
// header) is written "| |", as seeds/003 and GitHub's own examples do.
func mdRow(w io.Writer, cells []string) {
	line := "| " + strings.Join(cells, " | ") + " |"
	if len(cells) > 0 && cells[0] == "" {
		line = "|" + line[2:]
	}
	fmt.Fprintln(w, line)
}

// writeMDRows writes t's head, its rule and its rows, each cell escaped;
// numeric right-aligns every column but the first.
func writeMDRows(w io.Writer, t *Table, numeric bool) {
	mdRow(w, t.Head)
	rule := make([]string, len(t.Head))
	for i := range rule {
		rule[i] = "---"
		if numeric && i > 0 {
			rule[i] = "---:"
		}
	}
	mdRow(w, rule)
	for _, r := range t.Rows {
		esc := make([]string, len(r))
		for i, c := range r {
			esc[i] = mdEscape(c)
		}
		mdRow(w, esc)
	}
}

// mdEscape keeps a user-chosen name from breaking the table or the heading.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

func writeMDSaturation(w io.Writer, sat []job.Saturation) {
	if len(sat) == 0 {
		return
	}
	fmt.Fprint(w, "\n## Saturation\n\n")
	for _, s := range sat {
		fmt.Fprintf(w, "- %s\n", mdEscape(s.Sentence))
	}
}

func writeMDVerdict(w io.Writer, v job.VerdictResult, points []job.Point) {
	result := v.Result
	if result == "" {
		result = job.VerdictNone
	}
	fmt.Fprintf(w, "\n## Verdict: %s\n", result)
	switch {
	case result == job.VerdictNone:
		fmt.Fprint(w, "\nNo thresholds were set.\n")
		return
	case len(v.Failures) == 0:
		fmt.Fprint(w, "\nEvery point met every threshold.\n")
		return
	}
	fmt.Fprintf(w, "\n%s:\n\n", plural(len(v.Failures), "failing cell"))
	relative := false
	for _, f := range v.Failures {
		relative = relative || f.BaselineJob != ""
	}
	head, rule := []string{"threshold", "target", "point", "value"}, []string{"---", "---", "---", "---:"}
	if relative {
		head, rule = append(head, "baseline", "bound"), append(rule, "---:", "---:")
	}
	mdRow(w, head)
	mdRow(w, rule)
	for _, f := range v.Failures {
		point := "" // the threshold failed as a whole
		if f.Point >= 0 {
			point = concLabel(f.Concurrency)
		}
		if f.Point >= 0 && f.Point < len(points) {
			point += ", " + stopFlag(points[f.Point])
		}
		row := []string{"`" + strings.ReplaceAll(f.Threshold, "`", "'") + "`", mdEscape(f.Target), point, fmt.Sprintf("%.2f", f.Value)}
		if relative {
			row = append(row, optNumber(f.Baseline), optNumber(f.Bound))
		}
		if f.Reason != "" {
			row[3] = mdEscape(f.Reason) // no value to show: say why
		}
		mdRow(w, row)
	}
}

func optNumber(v *float64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%.2f", *v)
}

// writeMDCompareTo sets each cell beside the compare_to job's.
func writeMDCompareTo(w io.Writer, c *job.BaselineComparison) {
	if c == nil {
		return
	}
	fmt.Fprintf(w, "\n## Compared with job `%s`\n\n", c.JobID)
	if c.Gone != "" {
		fmt.Fprintf(w, "%s.\n", mdEscape(c.Gone))
		return
	}
	mdRow(w, []string{"target", "point", "req/s", "baseline req/s", "req/s change", "p99 ms", "baseline p99 ms", "p99 change"})
	mdRow(w, []string{"---", "---", "---:", "---:", "---:", "---:", "---:", "---:"})
	for _, cell := range c.Cells {
		row := []string{mdEscape(cell.Point.Target), concLabel(cell.Point.Concurrency) + ", " + stopFlag(cell.Point),
			fmt.Sprintf("%.2f", cell.RPS), "", "no matching cell", fmt.Sprintf("%.2f", cell.P99Ms), "", ""}
		if cmp := cell.Comparison; cmp != nil {
			row[3], row[4] = fmt.Sprintf("%.2f", cell.BaselineRPS), sigText(cmp.RPSSignificance, cmp.RPS)
			row[6], row[7] = fmt.Sprintf("%.2f", cell.BaselineP99Ms), sigText(cmp.P99Significance, cmp.P99)
		}
		mdRow(w, row)
	}
	fmt.Fprintf(w, "\n%s\n", noiseNote)
}
