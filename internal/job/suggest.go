package job

import (
	"fmt"
	"strings"
)

// maxSuggestable bounds the names the decoder looks for a near match of:
// comparing costs the product of two lengths, and no field name is long.
const maxSuggestable = 64

// maxListed is how many valid names an unknown field's message lists
// when none is near it; past that the list would hide the message. The
// spec's top level has 17 fields and must still list them.
const maxListed = 24

// unknownFieldMessage tells the client that name is not a field where it
// stands, and what it meant: the nearest of valid (sorted), when one is
// close enough to be a typo, else the valid names when they are few.
func unknownFieldMessage(name string, valid []string) string {
	if best, ok := nearest(name, valid); ok {
		return fmt.Sprintf("unknown field %q; did you mean %q?", name, best)
	}
	if len(valid) > 0 && len(valid) <= maxListed {
		quoted := make([]string, len(valid))
		for i, v := range valid {
			quoted[i] = fmt.Sprintf("%q", v)
		}
		return fmt.Sprintf("unknown field %q; the fields here are %s", name, strings.Join(quoted, ", "))
	}
	return fmt.Sprintf("unknown field %q", name)
}

// Suggest is the name of valid that name is most likely a typo of, for
// a message that says what the client meant ("did you mean ...?").
func Suggest(name string, valid []string) (string, bool) {
	if len(name) > maxSuggestable {
		return "", false
	}
	return nearest(name, valid)
}

// nearest is the name of candidates closest to name, if it is close
// enough to be a typo of it: the same but for case, or at most two edits
// (an insertion, a deletion, a substitution or two letters swapped) and
// fewer than half its letters. Ties go to the first in candidates.
func nearest(name string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c, true
		}
		d := editDistance(strings.ToLower(name), c)
		if d > 2 || 2*d >= len(c) {
			continue
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist >= 0
}

// editDistance is the optimal string alignment distance of a and b, in
// bytes: insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	// Three rows of the table: two before the current one, for swaps.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
