package measure

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// HdrHistogram's V2 cookies: the uncompressed payload's and the compressed
// frame's, each with the word size (8 bytes) in bits 4-7.
const (
	v2PayloadCookie    = hdrhistogram.V2EncodingCookieBase | 0x10
	v2CompressedCookie = hdrhistogram.V2CompressedEncodingCookieBase | 0x10
)

// zlibWriters keeps compressors between encodings. A run stores one
// histogram per phase and a best-compression zlib writer costs about a
// megabyte to set up, which is most of what (*hdrhistogram.Histogram).Encode
// spends; reused, the encoding is a scan of the counts and a small deflate.
var zlibWriters = sync.Pool{New: func() any {
	w, err := zlib.NewWriterLevel(nil, zlib.BestCompression)
	if err != nil {
		panic(fmt.Sprintf("measure: zlib level %d: %v", zlib.BestCompression, err)) // a constant level: cannot happen
	}
	return w
}}

// EncodeHistogram writes h in HdrHistogram's V2 compressed encoding, base64,
// byte for byte what h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
// writes, so hdrhistogram.Decode and any other V2 reader take it; it only
// allocates less. A nil h gives nil.
func EncodeHistogram(h *hdrhistogram.Histogram) ([]byte, error) {
	if h == nil {
		return nil, nil
	}
	snap := h.Export()
	// The payload: a 40-byte header, then the counts.
	payload := appendV2Counts(make([]byte, 40, 40+256), snap.Counts)
	be := binary.BigEndian
	be.PutUint32(payload[0:], uint32(v2PayloadCookie))
	be.PutUint32(payload[4:], uint32(len(payload)-40))
	be.PutUint32(payload[8:], 0) // normalizing index offset: counts are written in logical order
	be.PutUint32(payload[12:], uint32(snap.SignificantFigures))
	be.PutUint64(payload[16:], uint64(snap.LowestTrackableValue))
	be.PutUint64(payload[24:], uint64(snap.HighestTrackableValue))
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	be.PutUint64(payload[32:], math.Float64bits(ratio))

	var frame bytes.Buffer
	frame.Write([]byte{0, 0, 0, 0, 0, 0, 0, 0}) // cookie and compressed length, filled in below
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&frame)
	if _, err := zw.Write(payload); err != nil {
		return nil, fmt.Errorf("measure: compress histogram: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("measure: compress histogram: %w", err)
	}
	raw := frame.Bytes()
	be.PutUint32(raw[0:], uint32(v2CompressedCookie))
	be.PutUint32(raw[4:], uint32(len(raw)-8))
	out := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	base64.StdEncoding.Encode(out, raw)
	return out, nil
}

// appendV2Counts appends the V2 counts array: each count as a ZigZag
// LEB128 (at most 9 bytes, the last holding 8 bits), a run of two or more
// zeros as its negated length, up to the last non-zero count (one zero
// count for an empty histogram, as the reference encoder writes).
func appendV2Counts(dst []byte, counts []int64) []byte {
	limit := len(counts)
	for limit > 0 && counts[limit-1] == 0 {
		limit--
	}
	if limit == 0 {
		return appendZigZag9(dst, 0)
	}
	for i := 0; i < limit; {
		v := counts[i]
		i++
		if v == 0 {
			zeros := int64(1)
			for i < limit && counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				v = -zeros
			}
		}
		dst = appendZigZag9(dst, v)
	}
	return dst
}

// appendZigZag9 is HdrHistogram's LEB128-64b9B of a ZigZag-encoded value:
// seven bits a byte for the first eight bytes, all eight in a ninth.
func appendZigZag9(dst []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for range 8 {
		if u>>7 == 0 {
			return append(dst, byte(u))
		}
		dst = append(dst, byte(u&0x7f)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}
