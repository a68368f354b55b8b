package secrettest

import (
	"slices"
	"testing"
)

func TestLeaks(t *testing.T) {
	key := Random(t, "bq_")
	if len(key) != 35 || key[:3] != "bq_" {
		t.Fatalf("Random = %q, want bq_ and 32 hex digits", key)
	}
	other := Random(t, "")
	tests := []struct {
		text string
		want []string
	}{
		{"nothing here", nil},
		{"the key " + key, []string{key}},
		{"a part: " + key[10:18] + "...", []string{key}},
		{"seven: " + key[10:17], nil},
		{key + " " + other, []string{key, other}},
	}
	for _, tt := range tests {
		if got := Leaks(tt.text, key, other); !slices.Equal(got, tt.want) {
			t.Errorf("Leaks(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
