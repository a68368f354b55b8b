package job

import (
	"crypto/rand"
	"time"
)

// crockford is the ULID alphabet: no I, L, O or U, so an ID read aloud or
// copied by hand survives.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDLen is the length of a job ID.
const IDLen = 26

// NewID returns a new job ID in ULID form: 26 characters, the first 10 the
// creation time in milliseconds, the last 16 from 80 random bits
// (crypto/rand). IDs sort by creation time as strings, so Redis sorted sets
// and cursors can page through them in order; two IDs made in the same
// millisecond are in random order.
func NewID() string {
	return newID(time.Now())
}

func newID(now time.Time) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	_, _ = rand.Read(b[6:]) // never fails: crypto/rand aborts the program rather than return short
	return encodeULID(b)
}

// encodeULID writes 128 bits as 26 base-32 digits, most significant first
// (the first digit holds only the top 3 bits).
func encodeULID(b [16]byte) string {
	var out [IDLen]byte
	// Walk the 130-bit big-endian number (two leading zero bits) 5 bits
	// at a time.
	for i := range IDLen {
		bit := i*5 - 2 // index of the digit's first bit within b
		var v int
		for k := range 5 {
			pos := bit + k
			if pos < 0 {
				continue
			}
			v = v<<1 | int(b[pos/8]>>(7-pos%8)&1)
		}
		out[i] = crockford[v]
	}
	return string(out[:])
}

// ValidID reports whether s has the form NewID produces, so the API can
// answer 404 for garbage without a Redis round trip.
func ValidID(s string) bool {
	if len(s) != IDLen || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isCrockford(s[i]) {
			return false
		}
	}
	return true
}

func isCrockford(c byte) bool {
	for i := 0; i < len(crockford); i++ {
		if crockford[i] == c {
			return true
		}
	}
	return false
}

// IDTime returns the creation time encoded in a valid ID.
func IDTime(id string) (time.Time, bool) {
	if !ValidID(id) {
		return time.Time{}, false
	}
	var ms int64
	for i := range 10 {
		for j := 0; j < len(crockford); j++ {
			if crockford[j] == id[i] {
				ms = ms<<5 | int64(j)
			}
		}
	}
	return time.UnixMilli(ms), true
}
