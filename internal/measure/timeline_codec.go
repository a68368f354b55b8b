package measure

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// timelineVersion is the first byte of an encoded timeline. Version 2
// added the latency level after the interval count; version 1 (level 0)
// is still read.
const timelineVersion = 2

// maxTimelineBytes bounds what DecodeTimeline inflates: a full timeline
// (MaxTimelineIntervals intervals, each histogram spread over every bucket)
// stays well below it, and a hostile stored blob cannot make it allocate
// more.
const maxTimelineBytes = 64 << 20

// Which of an interval's fields are encoded (the others are zero).
const (
	ivRequests = 1 << iota
	ivNotSucceeded
	ivFailures
	ivNon2xx
	ivBytes
	ivLatency
	ivIntended
	ivStarted
	ivLate
	ivMaxSendLag
	ivConcurrency
)

// EncodeTimeline gives t's stored form: every interval's counts, failure
// classes and latency histogram (the non-empty span of its buckets), each
// number a varint, fields that are zero left out behind a bit mask, zero
// buckets in runs, the whole deflated. Adjacent intervals of a run look
// alike, so deflate finds most of an interval's bytes in the one before.
// Nothing is rounded: DecodeTimeline gives back t, which merges exactly.
// A nil t, or one without an interval (nothing was cut), gives nil.
func EncodeTimeline(t *Timeline) ([]byte, error) {
	if t == nil || t.Interval <= 0 {
		return nil, nil
	}
	raw := []byte{timelineVersion}
	var start int64
	if !t.Start.IsZero() {
		start = t.Start.UnixNano()
	}
	raw = binary.AppendVarint(raw, start)
	raw = binary.AppendUvarint(raw, uint64(t.Interval))
	raw = binary.AppendUvarint(raw, uint64(len(t.Intervals)))
	if t.LatencyLevel < 0 || t.LatencyLevel > MaxLatencyLevel {
		return nil, fmt.Errorf("measure: encode timeline: latency level %d", t.LatencyLevel)
	}
	raw = binary.AppendUvarint(raw, uint64(t.LatencyLevel))
	g := 1 << t.LatencyLevel
	var prev Interval
	for i := range t.Intervals {
		if !t.Intervals[i].Latency.atLevel(g) {
			return nil, fmt.Errorf("measure: encode timeline: interval %d's latency is finer than level %d", i, t.LatencyLevel)
		}
		raw = appendInterval(raw, &t.Intervals[i], &prev, g)
		prev = t.Intervals[i]
	}
	var out bytes.Buffer
	zw, err := flate.NewWriter(&out, flate.BestCompression)
	if err != nil {
		return nil, fmt.Errorf("measure: compress timeline: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("measure: compress timeline: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("measure: compress timeline: %w", err)
	}
	return out.Bytes(), nil
}

// appendInterval writes iv as its difference from prev, the interval
// before it: a steady run's counts differ from one interval to the next by
// their noise, a byte or two, where the counts themselves take three or
// four.
func appendInterval(dst []byte, iv, prev *Interval, g int) []byte {
	fields := []struct {
		bit uint64
		v   int64
	}{
		{ivRequests, iv.Requests - prev.Requests},
		{ivNotSucceeded, (iv.Requests - iv.Succeeded) - (prev.Requests - prev.Succeeded)},
		{ivFailures, iv.Failures.Total()},
		{ivNon2xx, iv.Non2xx - prev.Non2xx},
		{ivBytes, iv.Bytes - prev.Bytes},
		{ivLatency, iv.Latency.Count + int64(len(iv.Latency.Counts))},
		{ivIntended, iv.Intended - prev.Intended},
		{ivStarted, iv.Started - prev.Started},
		{ivLate, iv.Late - prev.Late},
		{ivMaxSendLag, iv.MaxSendLag - prev.MaxSendLag},
		{ivConcurrency, iv.Concurrency - prev.Concurrency},
	}
	var mask uint64
	for _, f := range fields {
		if f.v != 0 {
			mask |= f.bit
		}
	}
	dst = binary.AppendUvarint(dst, mask)
	for _, f := range fields {
		if mask&f.bit == 0 {
			continue
		}
		switch f.bit {
		case ivFailures:
			dst = appendFailures(dst, &iv.Failures)
		case ivLatency:
			dst = appendLatency(dst, &iv.Latency, &prev.Latency, g)
		default:
			dst = binary.AppendVarint(dst, f.v)
		}
	}
	return dst
}

// failureClasses lists Failures' counters in their encoded order.
func failureClasses(f *Failures) []*int64 {
	return []*int64{&f.Connect, &f.Receive, &f.Length, &f.Exceptions, &f.Timeout, &f.PortExhaustion,
		&f.TLSHandshake, &f.BodyTooLarge, &f.HeaderTooLarge, &f.StreamReset, &f.GoAway, &f.FlowControl, &f.Protocol}
}

func appendFailures(dst []byte, f *Failures) []byte {
	classes := failureClasses(f)
	var mask uint64
	for i, p := range classes {
		if *p != 0 {
			mask |= 1 << i
		}
	}
	dst = binary.AppendUvarint(dst, mask)
	for _, p := range classes {
		if *p != 0 {
			dst = binary.AppendVarint(dst, *p)
		}
	}
	return dst
}

// appendLatency writes count, max, the span's offset and length, then each
// bucket's count less prev's count in the same bucket; at a latency level
// with groups of g buckets, only the groups' last buckets (the others are
// empty), offset and length counted in groups.
func appendLatency(dst []byte, l, prev *Latency, g int) []byte {
	dst = binary.AppendVarint(dst, l.Count)
	dst = binary.AppendVarint(dst, l.Max-prev.Max)
	groups := (len(l.Counts) + g - 1) / g
	dst = binary.AppendUvarint(dst, uint64(l.Offset/g))
	dst = binary.AppendUvarint(dst, uint64(groups))
	for j := range groups {
		i := l.Offset + j*g
		dst = binary.AppendVarint(dst, l.at(i)-prev.at(i))
	}
	return dst
}

// atLevel reports whether l's counts sit only in the last bucket of aligned
// groups of g, as CoarsenLatency leaves them.
func (l *Latency) atLevel(g int) bool {
	if g == 1 || len(l.Counts) == 0 {
		return true
	}
	if l.Offset%g != g-1 {
		return false
	}
	for i, n := range l.Counts {
		if i%g != 0 && n != 0 {
			return false
		}
	}
	return true
}

// at is the count of bucket i (0 outside the span).
func (l *Latency) at(i int) int64 {
	if i -= l.Offset; i >= 0 && i < len(l.Counts) {
		return l.Counts[i]
	}
	return 0
}

// MaxStoredTimeline bounds an encoded timeline: 48 KiB, 64 KiB once base64
// in a stored measurement's JSON.
const MaxStoredTimeline = 48 << 10

// EncodeTimelineWithin is EncodeTimeline bounded by limit bytes: a timeline
// whose encoding is longer gives up resolution, exactly, until it fits:
// its latency buckets first (CoarsenLatency, up to MaxLatencyLevel), then
// its intervals (Coarsen, merged pairwise). A histogram's counts change
// from one interval to the next by more than an encoding removes: a
// 10-minute run at 1 s fits as recorded at 20 000 requests a second with a
// narrow latency spread, and at level 2 at 56 000 against nginx (see
// TestTimelineStoredSize and loadgen's BenchmarkTimelineStoredSize).
func EncodeTimelineWithin(t *Timeline, limit int) ([]byte, error) {
	enc, err := EncodeTimeline(t)
	for err == nil && len(enc) > limit && (len(t.Intervals) > 1 || t.LatencyLevel < MaxLatencyLevel) {
		t = t.Clone()
		if t.LatencyLevel < MaxLatencyLevel {
			t.CoarsenLatency()
		} else {
			t.Coarsen()
		}
		enc, err = EncodeTimeline(t)
	}
	return enc, err
}

// DecodeTimeline reads what EncodeTimeline wrote; nil or empty data gives a
// nil timeline. Every error wraps ErrBadEncoding.
func DecodeTimeline(data []byte) (*Timeline, error) {
	if len(data) == 0 {
		return nil, nil
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(data)), maxTimelineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: timeline: %w", ErrBadEncoding, err)
	}
	if len(raw) > maxTimelineBytes {
		return nil, fmt.Errorf("%w: timeline: inflates past %d bytes", ErrBadEncoding, maxTimelineBytes)
	}
	d := timelineReader{buf: raw, buckets: len(NewIntervalHistogram().Export().Counts)}
	t, err := d.timeline()
	if err != nil {
		return nil, fmt.Errorf("%w: timeline: %w", ErrBadEncoding, err)
	}
	return t, nil
}

var errTimelineShort = errors.New("truncated")

type timelineReader struct {
	buf     []byte
	buckets int // an interval histogram's counts
	group   int // buckets per stored bucket: 1 << the latency level
	err     error
}

func (d *timelineReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.err = errTimelineShort
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *timelineReader) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.err = errTimelineShort
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// count reads a varint that must not be negative.
func (d *timelineReader) count() int64 {
	v := d.varint()
	if v < 0 && d.err == nil {
		d.err = fmt.Errorf("negative count %d", v)
	}
	return v
}

func (d *timelineReader) timeline() (*Timeline, error) {
	if len(d.buf) == 0 || d.buf[0] < 1 || d.buf[0] > timelineVersion {
		return nil, errors.New("unknown version")
	}
	version := d.buf[0]
	d.buf = d.buf[1:]
	t := &Timeline{}
	if start := d.varint(); start != 0 {
		t.Start = time.Unix(0, start).UTC()
	}
	t.Interval = time.Duration(d.uvarint())
	n := d.uvarint()
	if d.err == nil && (t.Interval <= 0 || n > MaxTimelineIntervals) {
		return nil, fmt.Errorf("interval %v with %d intervals", t.Interval, n)
	}
	if version >= 2 {
		level := d.uvarint()
		if d.err == nil && level > MaxLatencyLevel {
			return nil, fmt.Errorf("latency level %d", level)
		}
		t.LatencyLevel = int(level)
	}
	d.group = 1 << t.LatencyLevel
	t.Intervals = make([]Interval, 0, min(n, MaxTimelineIntervals))
	var prev Interval
	for range n {
		if d.err != nil {
			break
		}
		prev = d.interval(&prev)
		t.Intervals = append(t.Intervals, prev)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%d bytes past the last interval", len(d.buf))
	}
	return t, nil
}

// interval reads an interval written as its difference from prev.
func (d *timelineReader) interval(prev *Interval) Interval {
	iv := Interval{Requests: prev.Requests, Non2xx: prev.Non2xx, Bytes: prev.Bytes, Intended: prev.Intended,
		Started: prev.Started, Late: prev.Late, MaxSendLag: prev.MaxSendLag, Concurrency: prev.Concurrency}
	notSucceeded := prev.Requests - prev.Succeeded
	mask := d.uvarint()
	if mask>>bits.Len(ivConcurrency) != 0 {
		d.err = fmt.Errorf("unknown fields %#x", mask)
		return iv
	}
	for bit := uint64(1); bit <= ivConcurrency; bit <<= 1 {
		if mask&bit == 0 {
			continue
		}
		switch bit {
		case ivRequests:
			iv.Requests += d.varint()
		case ivNotSucceeded:
			notSucceeded += d.varint()
		case ivFailures:
			d.failures(&iv.Failures)
		case ivNon2xx:
			iv.Non2xx += d.varint()
		case ivBytes:
			iv.Bytes += d.varint()
		case ivLatency:
			d.latency(&iv.Latency, &prev.Latency)
		case ivIntended:
			iv.Intended += d.varint()
		case ivStarted:
			iv.Started += d.varint()
		case ivLate:
			iv.Late += d.varint()
		case ivMaxSendLag:
			iv.MaxSendLag += d.varint()
		case ivConcurrency:
			iv.Concurrency += d.varint()
		}
	}
	iv.Succeeded = iv.Requests - notSucceeded
	if d.err == nil {
		for _, v := range []int64{iv.Requests, notSucceeded, iv.Succeeded, iv.Non2xx, iv.Bytes, iv.Intended, iv.Started, iv.Late, iv.MaxSendLag, iv.Concurrency} {
			if v < 0 {
				d.err = fmt.Errorf("a negative count in %+v", iv)
				break
			}
		}
	}
	return iv
}

func (d *timelineReader) failures(f *Failures) {
	classes := failureClasses(f)
	mask := d.uvarint()
	if mask>>len(classes) != 0 {
		d.err = fmt.Errorf("unknown failure classes %#x", mask)
		return
	}
	for i, p := range classes {
		if mask&(1<<i) != 0 {
			*p = d.count()
		}
	}
}

func (d *timelineReader) latency(l, prev *Latency) {
	l.Count = d.count()
	l.Max = prev.Max + d.varint()
	off, n := d.uvarint(), d.uvarint()
	if d.err != nil {
		return
	}
	g := d.group
	if groups := uint64(d.buckets / g); off > groups || n > groups-off {
		d.err = fmt.Errorf("latency buckets %d..%d past the histogram's %d", off*uint64(g), (off+n)*uint64(g), d.buckets)
		return
	}
	if n == 0 {
		l.Offset = 0
		if g == 1 {
			l.Offset = int(off)
		}
	} else {
		l.Offset = int(off)*g + g - 1
		l.Counts = make([]int64, (int(n)-1)*g+1)
	}
	var sum int64
	for j := 0; j < int(n) && d.err == nil; j++ {
		i := l.Offset + j*g
		v := prev.at(i) + d.varint()
		if v < 0 {
			d.err = fmt.Errorf("latency bucket %d holds %d", i, v)
			return
		}
		l.Counts[j*g] = v
		sum += v
	}
	if d.err == nil && (sum != l.Count || l.Max < 0) {
		d.err = fmt.Errorf("latency buckets hold %d values, count says %d", sum, l.Count)
	}
}
