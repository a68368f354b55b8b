package abcmd

import (
	"fmt"
	"strings"
)

// programNames are the words a command line may start with; they name the
// tool, not an argument, and are dropped.
var programNames = [...]string{"ab", "http_load"}

// SplitCommandLine splits s into words as a POSIX shell does, without any
// expansion: blanks separate words; single quotes keep everything up to the
// next single quote; double quotes keep everything but allow \" \\ \$ \`
// and backslash-newline inside; an unquoted backslash keeps the next byte
// (backslash-newline joins lines). A first word written as a bare "ab" or
// "http_load" is the program name and is dropped, so a line pasted from a
// shell history works. Errors wrap ErrSyntax, or ErrTooManyWords past
// MaxWords.
func SplitCommandLine(s string) ([]string, error) {
	words, err := SplitCommandLineWords(s)
	if err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(words))
	for _, w := range words {
		out = append(out, w.Text)
	}
	return out, nil
}

// Word is one word of a command line with where it was written:
// line[Start:End] is the word as typed, quotes and escapes included.
type Word struct {
	Text       string
	Start, End int
}

// SplitCommandLineWords is SplitCommandLine with each word's place in s,
// so a caller can rewrite one word (a secret to hide, say) and keep the
// rest of the line byte for byte.
func SplitCommandLineWords(s string) ([]Word, error) {
	// Sized once from the blanks, an upper bound of the words (quoted
	// blanks aside): growing the list would allocate it twice over.
	sp := splitter{s: s, words: make([]Word, 0, min(strings.Count(s, " ")+1, MaxWords+1))}
	if err := sp.run(); err != nil {
		return nil, err
	}
	words := sp.words
	if len(words) > 0 && !sp.firstQuoted && isProgramName(words[0].Text) {
		words = words[1:]
	}
	return words, nil
}

func isProgramName(w string) bool {
	for _, p := range programNames {
		if w == p {
			return true
		}
	}
	return false
}

// splitter is the state of one SplitCommandLine call.
type splitter struct {
	s           string
	i           int
	words       []Word
	cur         strings.Builder
	inWord      bool
	start       int  // where the current word began in s
	firstQuoted bool // the first word had a quote or escape in it
}

// MaxWords bounds the words of a command line: an ab line with a hundred
// headers has about 250, and each word costs far more to parse and check
// than its bytes, so a longer line is refused as soon as it is seen.
const MaxWords = 512

func (sp *splitter) run() error {
	for sp.i < len(sp.s) {
		if len(sp.words) > MaxWords {
			return fmt.Errorf("%w: more than %d words", ErrTooManyWords, MaxWords)
		}
		c := sp.s[sp.i]
		at, wasInWord := sp.i, sp.inWord
		var err error
		switch c {
		case ' ', '\t', '\n', '\r':
			sp.endWord()
			sp.i++
		case '\'':
			err = sp.singleQuoted()
		case '"':
			err = sp.doubleQuoted()
		case '\\':
			err = sp.escaped()
		default:
			sp.inWord = true
			sp.cur.WriteByte(c)
			sp.i++
		}
		if err != nil {
			return err
		}
		if !wasInWord && sp.inWord {
			sp.start = at
		}
	}
	sp.endWord()
	if len(sp.words) > MaxWords {
		return fmt.Errorf("%w: more than %d words", ErrTooManyWords, MaxWords)
	}
	return nil
}

func (sp *splitter) endWord() {
	if !sp.inWord {
		return
	}
	sp.words = append(sp.words, Word{Text: sp.cur.String(), Start: sp.start, End: sp.i})
	sp.cur.Reset()
	sp.inWord = false
}

// quoting marks the current word as one that used quotes or escapes.
func (sp *splitter) quoting() {
	sp.inWord = true
	if len(sp.words) == 0 {
		sp.firstQuoted = true
	}
}

func (sp *splitter) singleQuoted() error {
	start := sp.i
	end := strings.IndexByte(sp.s[sp.i+1:], '\'')
	if end < 0 {
		return fmt.Errorf("%w: unterminated single quote at byte %d", ErrSyntax, start)
	}
	sp.quoting()
	sp.cur.WriteString(sp.s[sp.i+1 : sp.i+1+end])
	sp.i += end + 2
	return nil
}

func (sp *splitter) doubleQuoted() error {
	start := sp.i
	sp.quoting()
	for sp.i++; sp.i < len(sp.s); sp.i++ {
		c := sp.s[sp.i]
		switch {
		case c == '"':
			sp.i++
			return nil
		case c == '\\' && sp.i+1 < len(sp.s) && strings.IndexByte("$`\"\\\n", sp.s[sp.i+1]) >= 0:
			sp.i++
			if sp.s[sp.i] != '\n' { // backslash-newline is a line continuation
				sp.cur.WriteByte(sp.s[sp.i])
			}
		default:
			sp.cur.WriteByte(c)
		}
	}
	return fmt.Errorf("%w: unterminated double quote at byte %d", ErrSyntax, start)
}

func (sp *splitter) escaped() error {
	if sp.i+1 >= len(sp.s) {
		return fmt.Errorf("%w: backslash at the end of the line", ErrSyntax)
	}
	next := sp.s[sp.i+1]
	sp.i += 2
	if next == '\n' {
		return nil // line continuation: joins the lines, adds nothing
	}
	sp.quoting()
	sp.cur.WriteByte(next)
	return nil
}

// JoinCommandLine is the inverse of SplitCommandLine: it quotes each word
// only as much as needed, so SplitCommandLine(JoinCommandLine(w)) == w for
// every w (a first word "ab" is quoted so that it is not taken for the
// program name).
func JoinCommandLine(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if isPlainWord(w) && (i > 0 || !isProgramName(w)) {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// isPlainWord reports whether w needs no quotes: non-empty and made only of
// bytes no shell treats specially.
func isPlainWord(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("_@%+=:,./-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
