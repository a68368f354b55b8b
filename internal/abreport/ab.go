package abreport

import (
	"bufio"
	"fmt"
	"io"
	"math"
)

// TextOptions are ab's flags that change the report's shape.
type TextOptions struct {
	NoConfidence  bool // ab -S: min/avg/max table, no sd, median or warnings
	NoPercentiles bool // ab -d: no percentile block
}

// WriteAB writes ab 2.3's report body, from "Server Software:" to the last
// percentile line, label for label and in ab's order, with ab's number
// formats, values in column 25 and ab's conditional lines
// (as ab 2.3 prints them). The two blank lines ab prints before
// it belong to the progress output (Heartbeat.Finish). An open-model run
// (a fixed start rate, which ab lacks) keeps every line and adds a block
// of its own at the end; see writeABOpen. A run whose load generator was
// short of CPU gets one more line after all of them (ClientWarning).
func WriteAB(w io.Writer, r *Report, o TextOptions) error {
	bw := bufio.NewWriter(w)
	writeABHead(bw, r)
	writeABCounts(bw, r)
	writeABRates(bw, r)
	percentiles := !o.NoPercentiles && r.CompleteRequests > 1
	if r.CompleteRequests > 0 {
		writeABTable(bw, &r.ConnectionTimesMs, o.NoConfidence)
		if percentiles {
			writeABPercentiles(bw, r.PercentilesMs)
		}
	}
	if r.OpenModel != nil {
		writeABOpen(bw, r.OpenModel, percentiles)
	}
	writeClientWarning(bw, r)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("abreport: write ab report: %w", err)
	}
	return nil
}

// Each writer below prints into a bufio.Writer, whose first error sticks
// and is returned by Flush; the Fprintf errors are therefore not checked.

func writeABHead(w io.Writer, r *Report) {
	fmt.Fprintf(w, "Server Software:        %s\n", r.ServerSoftware)
	fmt.Fprintf(w, "Server Hostname:        %s\n", r.ServerHostname)
	fmt.Fprintf(w, "Server Port:            %d\n", r.ServerPort)
	if r.TLSProtocol != "" {
		fmt.Fprintf(w, "SSL/TLS Protocol:       %s\n", r.TLSProtocol)
	}
	fmt.Fprintf(w, "\n")
	fmt.Fprintf(w, "Document Path:          %s\n", r.DocumentPath)
	if r.VariableLength {
		fmt.Fprintf(w, "Document Length:        Variable\n")
	} else {
		fmt.Fprintf(w, "Document Length:        %d bytes\n", r.DocumentLength)
	}
	fmt.Fprintf(w, "\n")
}

func writeABCounts(w io.Writer, r *Report) {
	fmt.Fprintf(w, "Concurrency Level:      %d\n", r.ConcurrencyLevel)
	if r.HTTPVersion == "2" {
		// Not ab's: h2load's -c and -m, as used.
		fmt.Fprintf(w, "HTTP/2 connections:     %d (at most %d streams each)\n", r.Connections, r.MaxStreams)
	}
	fmt.Fprintf(w, "Time taken for tests:   %.3f seconds\n", r.TimeTakenS)
	fmt.Fprintf(w, "Complete requests:      %d\n", r.CompleteRequests)
	fmt.Fprintf(w, "Failed requests:        %d\n", r.FailedRequests)
	if r.FailedRequests > 0 {
		f := abClasses(r.Failed)
		fmt.Fprintf(w, "   (Connect: %d, Receive: %d, Length: %d, Exceptions: %d)\n",
			f.Connect, f.Receive, f.Length, f.Exceptions)
	}
	if r.WriteErrors > 0 {
		fmt.Fprintf(w, "Write errors:           %d\n", r.WriteErrors)
	}
	if r.Non2xxResponses > 0 {
		fmt.Fprintf(w, "Non-2xx responses:      %d\n", r.Non2xxResponses)
	}
	if r.KeepAlive {
		fmt.Fprintf(w, "Keep-Alive requests:    %d\n", r.KeepAliveRequests)
	}
	fmt.Fprintf(w, "Total transferred:      %d bytes\n", r.TotalTransferredBytes)
	if r.BodySent {
		// ab prints no unit on this line.
		fmt.Fprintf(w, "Total body sent:        %d\n", r.TotalBodySentBytes)
	}
	fmt.Fprintf(w, "HTML transferred:       %d bytes\n", r.HTMLTransferredBytes)
}

// abClasses folds benchq's extra classes into ab's four, so the breakdown
// line adds up as it does in ab: a port exhaustion is a failed connect() to
// ab, a failed TLS handshake a connection never made, a timeout a response
// that never arrived, and a body or header above its cap a response the
// engine refused to read on (an exception: Length stays "differs from the
// first response", which -l turns off, while a cut body fails even with -l).
func abClasses(f Failures) Failures {
	return Failures{
		Connect:    f.Connect + f.PortExhaustion + f.TLSHandshake,
		Receive:    f.Receive + f.Timeout + f.StreamReset + f.GoAway + f.FlowControl,
		Length:     f.Length,
		Exceptions: f.Exceptions + f.BodyTooLarge + f.HeaderTooLarge + f.Protocol,
	}
}

func writeABRates(w io.Writer, r *Report) {
	if r.TimeTakenS <= 0 || r.CompleteRequests <= 0 {
		return
	}
	fmt.Fprintf(w, "Requests per second:    %.2f [#/sec] (mean)\n", r.RequestsPerSecond)
	fmt.Fprintf(w, "Time per request:       %.3f [ms] (mean)\n", timePerRequestMs(r))
	fmt.Fprintf(w, "Time per request:       %.3f [ms] (mean, across all concurrent requests)\n", r.TimePerRequestAllMs)
	fmt.Fprintf(w, "Transfer rate:          %.2f [Kbytes/sec] received\n", r.TransferRateKbps)
	if r.BodySent {
		fmt.Fprintf(w, "                        %.2f kb/s sent\n", r.SentRateKbps)
		fmt.Fprintf(w, "                        %.2f kb/s total\n", r.TotalRateKbps)
	}
}

// timePerRequestMs is the value of ab's first "Time per request" line.
// ab prints c·t/n there, which in its closed model is the mean latency
// (c requests always in flight, Little's law). In an open model c only
// caps the requests in flight and c·t/n means nothing, so the line carries
// the mean latency itself, Total's mean, from each intended start. The line
// is kept rather than dropped: parsers of ab's output match "Time per
// request" and take the first match as the mean latency and the second as
// the mean across all concurrent requests, so a missing line would shift
// t/n into the first slot unnoticed. The JSON keeps ab's formula.
func timePerRequestMs(r *Report) float64 {
	if r.OpenModel != nil {
		return r.ConnectionTimesMs.Total.Mean
	}
	return r.TimePerRequestMs
}

// writeABOpen ends an open-model report with what ab has no line for: the
// requested and achieved start rates, the late starts, the send lag (the
// schedule's own error), which latencies are corrected for coordinated
// omission, and (unless -d) the uncorrected percentiles for comparison with closed-model tools. Labels take ab's 24
// columns; the percentiles share one line that starts with a label, so a
// parser reading ab's "  50%  ..." lines still gets the corrected ones only.
func writeABOpen(w io.Writer, o *OpenModel, percentiles bool) {
	fmt.Fprintf(w, "\nOpen model (requests started at a fixed rate)\n")
	fmt.Fprintf(w, "Requested rate:         %.2f [#/sec]\n", o.RequestedRate)
	fmt.Fprintf(w, "Achieved rate:          %.2f [#/sec]\n", o.AchievedRate)
	fmt.Fprintf(w, "Late starts:            %d (more than 1 ms behind schedule)\n", o.LateStarts)
	if l := o.SendLagMs; l != nil {
		fmt.Fprintf(w, "Send lag (ms):          50%% %.3f, 90%% %.3f, 99%% %.3f, 100%% %.3f (start after its intended time)\n",
			l.P50, l.P90, l.P99, l.Max)
	}
	fmt.Fprintf(w, "Corrected latencies:    Total, percentiles, Time per request (mean): from each\n")
	fmt.Fprintf(w, "                        intended start (corrected for coordinated omission)\n")
	fmt.Fprintf(w, "Uncorrected latencies:  Connect, Processing, Waiting: from the actual start\n")
	if !percentiles {
		return
	}
	p := o.UncorrectedPercentilesMs
	fmt.Fprintf(w, "Uncorrected (ms):       50%% %d, 90%% %d, 99%% %d, 100%% %d (from the actual start)\n",
		msRounded(p.P50), msRounded(p.P90), msRounded(p.P99), msRounded(p.P100))
}

// abRow is one table row as ab prints it: whole ms, sd as a double.
type abRow struct {
	label                  string
	what                   string // the phase's name in the SANE warnings
	min, mean, median, max int64
	sd                     float64
}

func abRows(ct *ConnectionTimes) [4]abRow {
	row := func(label, what string, s PhaseStats) abRow {
		return abRow{
			label: label, what: what,
			min: msRounded(s.Min), mean: meanRounded(s.Mean), median: msRounded(s.Median),
			max: msRounded(s.Max), sd: s.SD,
		}
	}
	return [4]abRow{
		row("Connect:    ", "the initial connection time", ct.Connect),
		row("Processing: ", "the processing time", ct.Processing),
		row("Waiting:    ", "the waiting time", ct.Waiting),
		row("Total:      ", "the total time", ct.Total),
	}
}

func writeABTable(w io.Writer, ct *ConnectionTimes, noConfidence bool) {
	rows := abRows(ct)
	fmt.Fprintf(w, "\nConnection Times (ms)\n")
	if noConfidence {
		fmt.Fprintf(w, "              min   avg   max\n")
		for _, r := range rows {
			// No space between avg and max: ab's format.
			fmt.Fprintf(w, "%s%5d %5d%5d\n", r.label, r.min, r.mean, r.max)
		}
		return
	}
	fmt.Fprintf(w, "              min  mean[+/-sd] median   max\n")
	for _, r := range rows {
		fmt.Fprintf(w, "%s%5d %4d %5.1f %6d %7d\n", r.label, r.min, r.mean, r.sd, r.median, r.max)
	}
	for _, r := range rows {
		writeSane(w, r)
	}
}

// writeSane is ab's reliability check on the already rounded values: a
// mean and median further apart than one (WARNING) or two (ERROR) standard
// deviations.
func writeSane(w io.Writer, r abRow) {
	d := math.Abs(float64(r.mean - r.median))
	switch {
	case d > 2*r.sd:
		fmt.Fprintf(w, "ERROR: The median and mean for %s are more than twice the standard\n", r.what)
		fmt.Fprintf(w, "       deviation apart. These results are NOT reliable.\n")
	case d > r.sd:
		fmt.Fprintf(w, "WARNING: The median and mean for %s are not within a normal deviation\n", r.what)
		fmt.Fprintf(w, "        These results are probably not that reliable.\n")
	}
}

func writeABPercentiles(w io.Writer, p Percentiles) {
	fmt.Fprintf(w, "\nPercentage of the requests served within a certain time (ms)\n")
	v := p.values()
	for i, pc := range abPercents() {
		if pc == 100 {
			fmt.Fprintf(w, " 100%%  %5d (longest request)\n", msRounded(v[i]))
			continue
		}
		fmt.Fprintf(w, "  %d%%  %5d\n", pc, msRounded(v[i]))
	}
}

// roundMs is ab's ap_round_ms: whole µs to whole ms, half up.
func roundMs(us int64) int64 {
	if us < 0 {
		return 0
	}
	return (us + 500) / 1000
}

// msRounded prints a stored whole-µs value in ms as ab does.
func msRounded(ms float64) int64 { return roundMs(msToUs(ms)) }

// meanRounded reproduces ab's mean: an integer µs mean (truncated) rounded
// half up to ms. The stored mean keeps nanoseconds, so it is truncated to
// µs first; the small epsilon absorbs float error in ms*1000.
func meanRounded(ms float64) int64 {
	return roundMs(int64(math.Floor(ms*1000 + 1e-4)))
}
