package job

import (
	"sort"
	"testing"
	"time"
)

func TestNewIDSortsByTime(t *testing.T) {
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ids []string
	for i := range 50 {
		ids = append(ids, newID(base.Add(time.Duration(i)*time.Millisecond)))
	}
	if !sort.StringsAreSorted(ids) {
		t.Errorf("IDs made 1 ms apart are not sorted: %v", ids)
	}
	for _, id := range ids {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
	if got, ok := IDTime(ids[7]); !ok || !got.Equal(base.Add(7*time.Millisecond)) {
		t.Errorf("IDTime(%q) = %v, %v, want %v", ids[7], got, ok, base.Add(7*time.Millisecond))
	}
}

func TestNewIDUnique(t *testing.T) {
	seen := make(map[string]bool)
	for range 1000 {
		id := NewID()
		if seen[id] {
			t.Fatalf("NewID() = %q twice", id)
		}
		seen[id] = true
	}
}

func TestEncodeULIDKnownValue(t *testing.T) {
	// The largest 128-bit value is the largest ULID.
	var b [16]byte
	for i := range b {
		b[i] = 0xff
	}
	if got, want := encodeULID(b), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"; got != want {
		t.Errorf("encodeULID(all ones) = %q, want %q", got, want)
	}
	b = [16]byte{15: 1}
	if got, want := encodeULID(b), "00000000000000000000000001"; got != want {
		t.Errorf("encodeULID(1) = %q, want %q", got, want)
	}
}

func TestValidID(t *testing.T) {
	for _, bad := range []string{"", "abc", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "0000000000000000000000000I", "01jabcdefghjkmnpqrstvwxyz0", "../../../../etc/passwd0000"} {
		if ValidID(bad) {
			t.Errorf("ValidID(%q) = true, want false", bad)
		}
	}
}
