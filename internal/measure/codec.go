package measure

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// codecVersion is written into every encoded measurement; a decoder meeting
// another version refuses it rather than guess what its fields mean.
const codecVersion = 1

// ErrBadEncoding is wrapped by every error of DecodeMeasurement: the bytes
// are not a measurement EncodeMeasurement wrote.
var ErrBadEncoding = errors.New("measure: not an encoded measurement")

// wireMeasurement is the stored form of a Measurement: every field but
// Samples (raw per-request timings, which grow with the run and which the
// histograms and sums already summarise), durations in nanoseconds.
type wireMeasurement struct {
	Version int `json:"v"`

	ServerSoftware string `json:"server_software,omitempty"`
	ServerHostname string `json:"server_hostname,omitempty"`
	ServerPort     int    `json:"server_port,omitempty"`
	DocumentPath   string `json:"document_path,omitempty"`
	DocumentLength int64  `json:"document_length,omitempty"`
	TLSProtocol    string `json:"tls_protocol,omitempty"`

	Concurrency  int              `json:"concurrency"`
	HTTPVersion  string           `json:"http_version,omitempty"`
	Connections  int64            `json:"connections,omitempty"`
	MaxStreams   int              `json:"max_streams,omitempty"`
	H2ErrorCodes map[string]int64 `json:"h2_error_codes,omitempty"`
	KeepAlive    bool             `json:"keep_alive,omitempty"`
	Method       string           `json:"method,omitempty"`
	Started      time.Time        `json:"started"`
	ElapsedNs    int64            `json:"elapsed_ns"`
	WarmupNs     int64            `json:"warmup_ns,omitempty"`

	Complete          int64    `json:"complete"`
	Failed            int64    `json:"failed"`
	Failures          Failures `json:"failures"`
	Non2xx            int64    `json:"non_2xx,omitempty"`
	WriteErrors       int64    `json:"write_errors,omitempty"`
	KeepAliveRequests int64    `json:"keep_alive_requests,omitempty"`

	TotalReceivedBytes int64 `json:"total_received_bytes"`
	BodyReceivedBytes  int64 `json:"body_received_bytes"`
	TotalSentBytes     int64 `json:"total_sent_bytes"`

	StatusCodes map[int]int64 `json:"status_codes,omitempty"`

	Connect        wirePhase `json:"connect"`
	Processing     wirePhase `json:"processing"`
	Waiting        wirePhase `json:"waiting"`
	Total          wirePhase `json:"total"`
	MaxInFlight    int64     `json:"max_in_flight"`
	ConnectToWrite wirePhase `json:"connect_to_write"`
	Open           *wireOpen `json:"open,omitempty"`
	// Absent for plain HTTP runs and in encodings older than TLS options.
	Handshake   *wirePhase   `json:"tls_handshake,omitempty"`
	TLSFailures *TLSFailures `json:"tls_failures,omitempty"`

	Aborted  string `json:"aborted,omitempty"`
	Canceled bool   `json:"canceled,omitempty"`
	Stopped  string `json:"stopped,omitempty"`

	ClientCPUNs     int64 `json:"client_cpu_ns,omitempty"`
	ClientCPUWaitNs int64 `json:"client_cpu_wait_ns,omitempty"`
	ClientSpinNs    int64 `json:"client_spin_ns,omitempty"`
	ClientCores     int   `json:"client_cores,omitempty"`

	// Timeline is EncodeTimelineWithin's bytes (base64 in JSON), within
	// MaxStoredTimeline; absent in encodings older than timelines.
	Timeline []byte `json:"timeline,omitempty"`
}

// wirePhase is a Phase with its histogram in HdrHistogram's V2 compressed
// encoding (base64, as the library writes it), which other HdrHistogram
// implementations read too.
type wirePhase struct {
	Count int64   `json:"count"`
	Sum   int64   `json:"sum_us"`
	SumSq float64 `json:"sum_sq_us2"`
	Min   int64   `json:"min_us"`
	Max   int64   `json:"max_us"`
	Hist  string  `json:"hdr,omitempty"`
}

type wireOpen struct {
	RequestedRate float64   `json:"requested_rate"`
	AchievedRate  float64   `json:"achieved_rate"`
	LateStarts    int64     `json:"late_starts"`
	Uncorrected   wirePhase `json:"uncorrected"`
	// Absent in encodings older than the send lag.
	SendLag *wirePhase `json:"send_lag,omitempty"`
}

// EncodeMeasurement gives m's stored form: JSON holding every counter, the
// failure classes, status codes, the open model and each phase's count,
// sums, extremes and HdrHistogram, so DecodeMeasurement gives back a
// measurement that merges and reports exactly as m does. Samples are left
// out. A nil m encodes as JSON null.
func EncodeMeasurement(m *Measurement) ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	w := wireMeasurement{
		Version:            codecVersion,
		ServerSoftware:     m.ServerSoftware,
		ServerHostname:     m.ServerHostname,
		ServerPort:         m.ServerPort,
		DocumentPath:       m.DocumentPath,
		DocumentLength:     m.DocumentLength,
		TLSProtocol:        m.TLSProtocol,
		Concurrency:        m.Concurrency,
		HTTPVersion:        m.HTTPVersion,
		Connections:        m.Connections,
		MaxStreams:         m.MaxStreams,
		H2ErrorCodes:       m.H2ErrorCodes,
		KeepAlive:          m.KeepAlive,
		Method:             m.Method,
		Started:            m.Started,
		ElapsedNs:          int64(m.Elapsed),
		WarmupNs:           int64(m.Warmup),
		Complete:           m.Complete,
		Failed:             m.Failed,
		Failures:           m.Failures,
		Non2xx:             m.Non2xx,
		WriteErrors:        m.WriteErrors,
		KeepAliveRequests:  m.KeepAliveRequests,
		TotalReceivedBytes: m.TotalReceivedBytes,
		BodyReceivedBytes:  m.BodyReceivedBytes,
		TotalSentBytes:     m.TotalSentBytes,
		StatusCodes:        m.StatusCodes,
		MaxInFlight:        m.MaxInFlight,
		Aborted:            m.Aborted,
		Canceled:           m.Canceled,
		Stopped:            m.Stopped,
		ClientCPUNs:        int64(m.ClientCPU),
		ClientCPUWaitNs:    int64(m.ClientCPUWait),
		ClientSpinNs:       int64(m.ClientSpin),
		ClientCores:        m.ClientCores,
	}
	var err error
	phases := []struct {
		name string
		ph   *Phase
		dst  *wirePhase
	}{
		{"connect", &m.Connect, &w.Connect},
		{"processing", &m.Processing, &w.Processing},
		{"waiting", &m.Waiting, &w.Waiting},
		{"total", &m.Total, &w.Total},
		{"connect_to_write", &m.ConnectToWrite, &w.ConnectToWrite},
	}
	if m.Open != nil {
		w.Open = &wireOpen{RequestedRate: m.Open.RequestedRate, AchievedRate: m.Open.AchievedRate, LateStarts: m.Open.LateStarts}
		phases = append(phases, struct {
			name string
			ph   *Phase
			dst  *wirePhase
		}{"open.uncorrected", &m.Open.Uncorrected, &w.Open.Uncorrected})
		if m.Open.SendLag.Count > 0 {
			w.Open.SendLag = &wirePhase{}
			phases = append(phases, struct {
				name string
				ph   *Phase
				dst  *wirePhase
			}{"open.send_lag", &m.Open.SendLag, w.Open.SendLag})
		}
	}
	if m.Handshake.Count > 0 {
		w.Handshake = &wirePhase{}
		phases = append(phases, struct {
			name string
			ph   *Phase
			dst  *wirePhase
		}{"tls_handshake", &m.Handshake, w.Handshake})
	}
	if !m.TLSFailures.IsZero() {
		f := m.TLSFailures
		w.TLSFailures = &f
	}
	for _, p := range phases {
		if *p.dst, err = encodePhase(p.ph); err != nil {
			return nil, fmt.Errorf("measure: encode measurement: %s: %w", p.name, err)
		}
	}
	if w.Timeline, err = EncodeTimelineWithin(m.Timeline, MaxStoredTimeline); err != nil {
		return nil, fmt.Errorf("measure: encode measurement: %w", err)
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return nil, fmt.Errorf("measure: encode measurement: %w", err)
	}
	return b, nil
}

func encodePhase(ph *Phase) (wirePhase, error) {
	w := wirePhase{Count: ph.Count, Sum: ph.Sum, SumSq: ph.SumSq, Min: ph.Min, Max: ph.Max}
	if ph.Hist != nil {
		b, err := EncodeHistogram(ph.Hist)
		if err != nil {
			return wirePhase{}, fmt.Errorf("histogram: %w", err)
		}
		w.Hist = string(b)
	}
	return w, nil
}

// DecodeMeasurement reads back what EncodeMeasurement wrote. JSON null gives
// a nil measurement and no error. Anything else that is not a consistent
// measurement of this version (a histogram of another range or precision, or
// whose count disagrees with its phase's) is refused with an error wrapping
// ErrBadEncoding; no input makes it panic.
func DecodeMeasurement(data []byte) (*Measurement, error) {
	var w *wireMeasurement
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadEncoding, err)
	}
	if w == nil {
		return nil, nil
	}
	if w.Version != codecVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadEncoding, w.Version, codecVersion)
	}
	m := &Measurement{
		ServerSoftware:     w.ServerSoftware,
		ServerHostname:     w.ServerHostname,
		ServerPort:         w.ServerPort,
		DocumentPath:       w.DocumentPath,
		DocumentLength:     w.DocumentLength,
		TLSProtocol:        w.TLSProtocol,
		Concurrency:        w.Concurrency,
		HTTPVersion:        w.HTTPVersion,
		Connections:        w.Connections,
		MaxStreams:         w.MaxStreams,
		H2ErrorCodes:       w.H2ErrorCodes,
		KeepAlive:          w.KeepAlive,
		Method:             w.Method,
		Started:            w.Started,
		Elapsed:            time.Duration(w.ElapsedNs),
		Warmup:             time.Duration(w.WarmupNs),
		Complete:           w.Complete,
		Failed:             w.Failed,
		Failures:           w.Failures,
		Non2xx:             w.Non2xx,
		WriteErrors:        w.WriteErrors,
		KeepAliveRequests:  w.KeepAliveRequests,
		TotalReceivedBytes: w.TotalReceivedBytes,
		BodyReceivedBytes:  w.BodyReceivedBytes,
		TotalSentBytes:     w.TotalSentBytes,
		StatusCodes:        w.StatusCodes,
		MaxInFlight:        w.MaxInFlight,
		Aborted:            w.Aborted,
		Canceled:           w.Canceled,
		Stopped:            w.Stopped,
		ClientCPU:          time.Duration(w.ClientCPUNs),
		ClientCPUWait:      time.Duration(w.ClientCPUWaitNs),
		ClientSpin:         time.Duration(w.ClientSpinNs),
		ClientCores:        w.ClientCores,
	}
	if m.StatusCodes == nil {
		// The engine always hands out a map; keep decoded ones alike.
		m.StatusCodes = make(map[int]int64)
	}
	var err error
	phases := []struct {
		name string
		src  *wirePhase
		dst  *Phase
	}{
		{"connect", &w.Connect, &m.Connect},
		{"processing", &w.Processing, &m.Processing},
		{"waiting", &w.Waiting, &m.Waiting},
		{"total", &w.Total, &m.Total},
		{"connect_to_write", &w.ConnectToWrite, &m.ConnectToWrite},
	}
	if w.Open != nil {
		m.Open = &OpenModel{RequestedRate: w.Open.RequestedRate, AchievedRate: w.Open.AchievedRate, LateStarts: w.Open.LateStarts}
		phases = append(phases, struct {
			name string
			src  *wirePhase
			dst  *Phase
		}{"open.uncorrected", &w.Open.Uncorrected, &m.Open.Uncorrected})
		if w.Open.SendLag != nil {
			phases = append(phases, struct {
				name string
				src  *wirePhase
				dst  *Phase
			}{"open.send_lag", w.Open.SendLag, &m.Open.SendLag})
		}
	}
	if w.Handshake != nil {
		phases = append(phases, struct {
			name string
			src  *wirePhase
			dst  *Phase
		}{"tls_handshake", w.Handshake, &m.Handshake})
	}
	if w.TLSFailures != nil {
		m.TLSFailures = *w.TLSFailures
	}
	for _, p := range phases {
		if *p.dst, err = decodePhase(p.src); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadEncoding, p.name, err)
		}
	}
	if m.Timeline, err = DecodeTimeline(w.Timeline); err != nil {
		return nil, err
	}
	return m, nil
}

func decodePhase(w *wirePhase) (Phase, error) {
	ph := Phase{Count: w.Count, Sum: w.Sum, SumSq: w.SumSq, Min: w.Min, Max: w.Max}
	switch {
	case w.Count < 0:
		return Phase{}, fmt.Errorf("count %d is negative", w.Count)
	case w.Count > 0 && w.Min > w.Max:
		return Phase{}, fmt.Errorf("min %d above max %d", w.Min, w.Max)
	}
	if w.Hist == "" {
		return ph, nil
	}
	h, err := hdrhistogram.Decode([]byte(w.Hist))
	if err != nil {
		return Phase{}, fmt.Errorf("histogram: %w", err)
	}
	// Only the engine's geometry merges bucket for bucket with the engine's
	// histograms; and every recorded value is in the histogram, so its count
	// is the phase's.
	if h.LowestTrackableValue() != histLowest || h.HighestTrackableValue() != histHighest || h.SignificantFigures() != histDigits {
		return Phase{}, fmt.Errorf("histogram range %d..%d at %d digits, want %d..%d at %d",
			h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures(), histLowest, histHighest, histDigits)
	}
	if h.TotalCount() != w.Count {
		return Phase{}, fmt.Errorf("histogram holds %d values, count is %d", h.TotalCount(), w.Count)
	}
	ph.Hist = h
	return ph, nil
}
