package abreport

import (
	"maps"
	"math"
	"time"

	"github.com/benchq/benchq/internal/measure"
)

// FromMeasurement builds the Report of one run. o supplies what the
// measurement cannot know (ab -l and -p/-u); everything else comes from m.
// Statistics follow ab 2.3's formulas (mean, sd, min and max of its
// "Connection Times" table, its rates) except the median and the
// percentiles, which come from the phase histograms (see doc.go). m is not
// modified; a nil m gives nil.
func FromMeasurement(m *measure.Measurement, o Options) *Report {
	if m == nil {
		return nil
	}
	r := &Report{
		ServerSoftware:        m.ServerSoftware,
		ServerHostname:        m.ServerHostname,
		ServerPort:            m.ServerPort,
		TLSProtocol:           m.TLSProtocol,
		Method:                m.Method,
		DocumentPath:          m.DocumentPath,
		DocumentLength:        m.DocumentLength,
		VariableLength:        o.VariableLength,
		ConcurrencyLevel:      m.Concurrency,
		TimeTakenS:            seconds(m.Elapsed),
		CompleteRequests:      m.Complete,
		FailedRequests:        m.Failed,
		Failed:                m.Failures,
		WriteErrors:           m.WriteErrors,
		Non2xxResponses:       m.Non2xx,
		KeepAlive:             m.KeepAlive,
		KeepAliveRequests:     m.KeepAliveRequests,
		TotalTransferredBytes: m.TotalReceivedBytes,
		HTMLTransferredBytes:  m.BodyReceivedBytes,
		BodySent:              o.BodySent,
		TotalBodySentBytes:    m.TotalSentBytes,
		StatusCodes:           maps.Clone(m.StatusCodes),
		LatencyHistogram:      encodeHistogram(m.Total.Hist),
		MaxParallel:           m.MaxInFlight,
		ConnectToWriteMs:      minMeanMax(&m.ConnectToWrite),
		Aborted:               m.Aborted,
		Canceled:              m.Canceled,
		Hints:                 m.Hints(),
		StartedAt:             m.Started,
		ClientCPUS:            seconds(m.ClientCPU),
		ClientCPUWaitS:        seconds(m.ClientCPUWait),
		ClientSpinS:           seconds(m.ClientSpin),
		ClientCores:           m.ClientCores,
		ClientSaturated:       m.ClientSaturated(),
		ClientUnjudged:        m.ClientUnjudged(),
		HTTPVersion:           m.HTTPVersion,
		Connections:           m.Connections,
		MaxStreams:            m.MaxStreams,
		H2ErrorCodes:          maps.Clone(m.H2ErrorCodes),
	}
	if r.StatusCodes == nil {
		r.StatusCodes = map[int]int64{}
	}
	if why := m.Unsteady(); why != "" {
		r.Unsteady, r.UnsteadyReason = true, why
	}
	r.setRates()
	r.ConnectionTimesMs = ConnectionTimes{
		Connect:    phaseStats(&m.Connect),
		Processing: phaseStats(&m.Processing),
		Waiting:    phaseStats(&m.Waiting),
		Total:      phaseStats(&m.Total),
	}
	r.PercentilesMs = abPercentiles(&m.Total)
	if m.Handshake.Count > 0 {
		hs := phaseStats(&m.Handshake)
		r.TLSHandshakes, r.TLSHandshakeMs = m.Handshake.Count, &hs
	}
	if !m.TLSFailures.IsZero() {
		f := m.TLSFailures
		r.TLSFailures = &f
	}
	if m.Open != nil {
		r.OpenModel = openModel(m.Open)
		if h := rateHint(m.Open); h != "" {
			r.Hints = append(r.Hints, h)
		}
	}
	return r
}

// setRates fills the per-second lines with ab's formulas; they stay 0 when
// ab would not print them (no time taken or nothing completed).
func (r *Report) setRates() {
	t, done := r.TimeTakenS, float64(r.CompleteRequests)
	if t <= 0 || done <= 0 {
		return
	}
	r.RequestsPerSecond = done / t
	r.TimePerRequestMs = float64(r.ConcurrencyLevel) * t * 1000 / done
	r.TimePerRequestAllMs = t * 1000 / done
	r.TransferRateKbps = float64(r.TotalTransferredBytes) / 1024 / t
	r.SentRateKbps = float64(r.TotalBodySentBytes) / 1024 / t
	r.TotalRateKbps = float64(r.TotalTransferredBytes+r.TotalBodySentBytes) / 1024 / t
}

// phaseStats summarises one phase in ms. Mean and sd come from the exact
// running sums (sd as the sample deviation, n-1, as ab); the median from the
// histogram.
func phaseStats(ph *measure.Phase) PhaseStats {
	if ph.Count == 0 {
		return PhaseStats{}
	}
	return PhaseStats{
		Min:    usToMs(ph.Min),
		Mean:   roundNs(phaseMean(ph) / 1000),
		SD:     roundNs(phaseSD(ph) / 1000),
		Median: usToMs(newRanked(ph.Hist, ph.Min, ph.Max).median()),
		Max:    usToMs(ph.Max),
	}
}

// minMeanMax summarises a phase by its exact extremes and mean, nil when
// it is empty.
func minMeanMax(ph *measure.Phase) *MinMeanMax {
	if ph.Count == 0 {
		return nil
	}
	return &MinMeanMax{Min: usToMs(ph.Min), Mean: roundNs(phaseMean(ph) / 1000), Max: usToMs(ph.Max)}
}

func abPercentiles(ph *measure.Phase) Percentiles {
	rk := newRanked(ph.Hist, ph.Min, ph.Max)
	var v [9]float64
	for i, p := range abPercents() {
		v[i] = usToMs(rk.abPercentile(p))
	}
	return percentilesFrom(v)
}

func openModel(o *measure.OpenModel) *OpenModel {
	r := &OpenModel{
		RequestedRate:            o.RequestedRate,
		AchievedRate:             o.AchievedRate,
		LateStarts:               o.LateStarts,
		UncorrectedPercentilesMs: abPercentiles(&o.Uncorrected),
	}
	if ph := &o.SendLag; ph.Count > 0 {
		r.SendLagMs = &SendLag{
			P50: usToMs(ph.Quantile(0.5)), P90: usToMs(ph.Quantile(0.9)),
			P99: usToMs(ph.Quantile(0.99)), Max: usToMs(ph.Max),
		}
	}
	return r
}

// rateHint warns when the generator could not hold the requested rate: the
// latencies are then those of a slower test than the one asked for.
func rateHint(o *measure.OpenModel) string {
	if o.RequestedRate <= 0 || o.AchievedRate >= 0.99*o.RequestedRate {
		return ""
	}
	return "rate: the requested start rate was not held; raise concurrency, which caps requests in flight, or lower the rate"
}

// phaseMean is the exact mean in µs.
func phaseMean(ph *measure.Phase) float64 {
	if ph.Count == 0 {
		return 0
	}
	return float64(ph.Sum) / float64(ph.Count)
}

// phaseSD is the sample standard deviation in µs (n-1), 0 for fewer than
// two values. Computed from the running sums; the clamp absorbs rounding
// when every value is equal.
func phaseSD(ph *measure.Phase) float64 {
	if ph.Count < 2 {
		return 0
	}
	n := float64(ph.Count)
	mean := float64(ph.Sum) / n
	v := (ph.SumSq - n*mean*mean) / (n - 1)
	if v <= 0 {
		return 0
	}
	return math.Sqrt(v)
}

// seconds converts d to seconds in whole microseconds, as ab's clock.
func seconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1e6 }

// usToMs converts whole µs to ms; exact to three decimals.
func usToMs(us int64) float64 { return float64(us) / 1000 }

// msToUs is usToMs's inverse for values that came from it.
func msToUs(ms float64) int64 { return int64(math.Round(ms * 1000)) }

// roundNs rounds ms to whole nanoseconds (six decimals).
func roundNs(ms float64) float64 { return math.Round(ms*1e6) / 1e6 }
