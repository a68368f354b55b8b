package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchq/benchq/internal/errcode"
)

// The strict decoder walks the bytes of a spec against the Go types of
// Spec, so it can name the exact path of each problem, which encoding/json
// does not (it stops at the first error and drops list indexes). It never
// builds the document as a tree and allocates nothing for what it only
// reads past (values of unknown fields, entries past a list's limit):
// what it keeps is bounded by the problems it reports, so however a spec
// is shaped, walking it costs little more than its size.
var (
	specType      = reflect.TypeFor[Spec]()
	durationType  = reflect.TypeFor[Duration]()
	rateType      = reflect.TypeFor[Rate]()            // a number or a "FROM:TO" string
	compareToType = reflect.TypeFor[CompareTo]()       // a job id string, or an object
	thresholdType = reflect.TypeFor[ThresholdEntry]()  // a threshold string, or an object
	abortType     = reflect.TypeFor[AbortScope]()      // true, false or a scope's name
	rawType       = reflect.TypeFor[json.RawMessage]() // any value, read later by its own decoder
)

// maxDepth bounds the nesting of a spec. A valid spec nests six levels
// (targets[0].request.tls.cipher_suites[0]); deeper is a mistake in an
// unknown field or an attempt to make the decoder recurse.
const maxDepth = 32

// defaultMaxItems bounds a list or map field that names no bound of its own.
const defaultMaxItems = 64

// errStop ends a walk whose input cannot be read further (a syntax error,
// the end of input, nesting past maxDepth); w.fatal says why.
var errStop = errors.New("job: stop decoding")

// walker reads one spec from data and records what does not fit.
type walker struct {
	data  []byte
	pos   int
	p     problems
	fatal *FieldError // why the walk stopped; it replaces every other problem
	depth int
	// unknown counts the problems in p that are unknown fields: when
	// they are all there is, the rest of the body has the right shape.
	unknown int
	// fields caches jsonFields per struct type.
	fields map[reflect.Type]map[string]reflect.StructField
}

// walk checks that data holds one JSON object of t's shape (t a struct
// type) and nothing after it, and returns the walker with what it found.
func walk(data []byte, t reflect.Type) *walker {
	w := &walker{data: data, fields: make(map[reflect.Type]map[string]reflect.StructField)}
	_ = w.body(t) // errStop: w.fatal says why
	return w
}

// problems returns what the walk found, nil for nothing. A problem that
// stopped the walk (malformed JSON, trailing data, nesting too deep)
// comes back alone: what was found before it is moot until the body can
// be read.
func (w *walker) problems() []FieldError {
	if w.fatal != nil {
		return []FieldError{*w.fatal}
	}
	return w.p.all()
}

// onlyUnknown reports whether every problem found is an unknown field.
func (w *walker) onlyUnknown() bool {
	return w.fatal == nil && w.unknown > 0 && w.unknown == len(w.p.list)+w.p.omitted
}

// walkSpec checks that data holds one JSON object of Spec's shape and
// nothing after it, and returns every problem as an invalid-spec error.
func walkSpec(data []byte) error {
	if probs := walk(data, specType).problems(); probs != nil {
		return Invalid(probs)
	}
	return nil
}

func (w *walker) body(t reflect.Type) error {
	c, ok := w.peek()
	if !ok {
		return w.stop("", "body is empty: want a JSON object")
	}
	if c != '{' {
		if err := w.skip(""); err != nil {
			return err
		}
		return w.stop("", "body is "+kindOf(c)+": want a JSON object")
	}
	if err := w.object("", t); err != nil {
		return err
	}
	if _, ok := w.peek(); ok {
		return w.stop("", fmt.Sprintf("unexpected data after the JSON object at byte %d", w.pos))
	}
	return nil
}

// stop records the problem that ends the walk.
func (w *walker) stop(field, msg string) error {
	if w.fatal == nil {
		w.fatal = &FieldError{Field: field, Message: msg}
	}
	return errStop
}

// syntax stops the walk at a malformed byte (or the end of input), located
// by line and column, which is what a person fixing a spec by hand needs.
func (w *walker) syntax(context string) error {
	line, col := errcode.LineColumn(w.data, w.pos)
	if w.pos >= len(w.data) {
		return w.stop("", fmt.Sprintf("malformed JSON: unexpected end of input (line %d, column %d)", line, col))
	}
	r, _ := utf8.DecodeRune(w.data[w.pos:])
	return w.stop("", fmt.Sprintf("malformed JSON: invalid character %s %s (line %d, column %d)", strconv.QuoteRune(r), context, line, col))
}

// peek skips white space and returns the next byte without reading it.
func (w *walker) peek() (byte, bool) {
	for w.pos < len(w.data) {
		switch c := w.data[w.pos]; c {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return c, true
		}
	}
	return 0, false
}

// expect reads the byte c, after white space.
func (w *walker) expect(c byte, context string) error {
	if got, ok := w.peek(); !ok || got != c {
		return w.syntax(context)
	}
	w.pos++
	return nil
}

// value checks the value at the cursor against t. limit bounds the
// entries of a list or map (its field's maxItems tag).
func (w *walker) value(path string, t reflect.Type, limit int) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c, ok := w.peek()
	if !ok {
		return w.syntax("")
	}
	switch {
	case c == 'n': // null leaves the zero value, as encoding/json does
		return w.skip(path)
	case t == rawType:
		return w.skip(path)
	case t == compareToType && c == '"':
		return w.skip(path)
	case t == thresholdType && c == '"':
		return w.skip(path)
	case t == abortType && (c == '"' || c == 't' || c == 'f'):
		return w.skip(path)
	case t == durationType:
		return w.duration(path)
	case t == rateType:
		return w.rate(path)
	case c == '{' && t.Kind() == reflect.Struct:
		return w.object(path, t)
	case c == '{' && t.Kind() == reflect.Map:
		return w.entries(path, t.Elem(), limit, '}', "entries")
	case c == '[' && t.Kind() == reflect.Slice:
		return w.entries(path, t.Elem(), limit, ']', "values")
	}
	start := w.pos
	if err := w.skip(path); err != nil {
		return err
	}
	w.scalar(path, t, w.data[start:w.pos])
	return nil
}

// scalar checks the value raw (a scalar, or a container where t wants
// another kind) against t, which value stripped of pointers.
func (w *walker) scalar(path string, t reflect.Type, raw []byte) {
	got := kindOf(raw[0])
	switch {
	case t == compareToType:
		w.p.add(path, "want a job id or a selector object, got %s", got)
	case t == thresholdType:
		w.p.add(path, "want a threshold such as \"p99_ms < 200\", or an object with \"threshold\" and \"abort\", got %s", got)
	case t == abortType:
		w.p.add(path, "%v, got %s", errAbortType, got)
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		w.p.add(path, "want an object, got %s", got)
	case t.Kind() == reflect.Slice:
		w.p.add(path, "want a list, got %s", got)
	case t.Kind() == reflect.String:
		if raw[0] != '"' {
			w.p.add(path, "want a string, got %s", got)
		}
	case t.Kind() == reflect.Bool:
		if raw[0] != 't' && raw[0] != 'f' {
			w.p.add(path, "want true or false, got %s", got)
		}
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		checkInt(&w.p, path, number(raw), t.Bits())
	case t.Kind() == reflect.Float64:
		checkFloat(&w.p, path, number(raw))
	default:
		w.p.add(path, "field of unsupported type %s", t)
	}
}

// number is raw as encoding/json's UseNumber would give it: a json.Number
// for a number, a placeholder of the right kind for anything else.
func number(raw []byte) any {
	if kindOf(raw[0]) != "a number" {
		return kindOf(raw[0])
	}
	return json.Number(raw)
}

// duration checks a duration: a string or a number of seconds.
func (w *walker) duration(path string) error {
	start := w.pos
	if err := w.skip(path); err != nil {
		return err
	}
	raw := w.data[start:w.pos]
	var v any // anything but a string or a number: parseDuration says what it wants
	switch raw[0] {
	case '"':
		v = w.text(raw)
	case '{', '[', 't', 'f':
	default:
		v = json.Number(raw)
	}
	if _, err := parseDuration(v); err != nil {
		w.p.add(path, "%v", err)
	}
	return nil
}

// rate checks a sweep rate: a number, or a string of one or of a ramp.
func (w *walker) rate(path string) error {
	start := w.pos
	if err := w.skip(path); err != nil {
		return err
	}
	raw := w.data[start:w.pos]
	var v any // anything but a string or a number: parseRate says what it wants
	switch raw[0] {
	case '"':
		v = w.text(raw)
	case '{', '[', 't', 'f':
	default:
		v = json.Number(raw)
	}
	if _, err := parseRate(v); err != nil {
		w.p.add(path, "%v", err)
	}
	return nil
}

// object checks the object at the cursor against the struct type t.
func (w *walker) object(path string, t reflect.Type) error {
	fields, ok := w.fields[t]
	if !ok {
		fields = jsonFields(t)
		w.fields[t] = fields
	}
	return w.members(path, '}', func(i int, key []byte) error {
		f, known := fields[string(key[1:len(key)-1])]
		if !known && bytes.IndexByte(key, '\\') >= 0 {
			f, known = fields[w.text(key)]
		}
		name := w.text(key)
		field := join(path, name)
		if !known {
			w.unknownField(field, name, fields)
			return w.skip(field)
		}
		return w.value(field, f.Type, itemLimit(f))
	})
}

// entries checks the elements of a list, or the values of a map, at the
// cursor, at most limit of them: past it the rest are only counted, so a
// long list costs nothing but the time to read it.
func (w *walker) entries(path string, elem reflect.Type, limit int, end byte, noun string) error {
	n := 0
	err := w.members(path, end, func(i int, key []byte) error {
		n++
		if i >= limit {
			return w.skip(path)
		}
		if end == '}' {
			return w.value(path+"["+strconv.Quote(w.text(key))+"]", elem, defaultMaxItems)
		}
		return w.value(index(path, i), elem, defaultMaxItems)
	})
	if err == nil && n > limit {
		w.p.add(path, "%s has %d %s; at most %d are allowed", path, n, noun, limit)
	}
	return err
}

// members reads the container at the cursor, an object (end '}') or a
// list (end ']'), calling each with the position of a member and, in an
// object, its key as a string literal (quoted, escapes unread: see text);
// each reads the member's value.
func (w *walker) members(path string, end byte, each func(i int, key []byte) error) error {
	w.pos++ // the opening '{' or '['
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxDepth {
		return w.stop(path, fmt.Sprintf("nested deeper than %d levels", maxDepth))
	}
	if c, ok := w.peek(); ok && c == end {
		w.pos++
		return nil
	}
	for i := 0; ; i++ {
		var key []byte
		if end == '}' {
			var err error
			if key, err = w.key(); err != nil {
				return err
			}
		}
		if err := each(i, key); err != nil {
			return err
		}
		c, ok := w.peek()
		switch {
		case ok && c == ',':
			w.pos++
		case ok && c == end:
			w.pos++
			return nil
		case end == '}':
			return w.syntax("after object key:value pair")
		default:
			return w.syntax("after array element")
		}
	}
}

// key reads an object key, as a string literal, and its colon.
func (w *walker) key() ([]byte, error) {
	if c, ok := w.peek(); !ok || c != '"' {
		return nil, w.syntax("looking for beginning of object key string")
	}
	start := w.pos
	if err := w.str(); err != nil {
		return nil, err
	}
	key := w.data[start:w.pos]
	return key, w.expect(':', "after object key")
}

// skip reads past the value at the cursor, checking only that it is well
// formed and not nested too deep; path names the field it is in.
func (w *walker) skip(path string) error {
	c, ok := w.peek()
	if !ok {
		return w.syntax("")
	}
	switch {
	case c == '{':
		return w.members(path, '}', func(int, []byte) error { return w.skip(path) })
	case c == '[':
		return w.members(path, ']', func(int, []byte) error { return w.skip(path) })
	case c == '"':
		return w.str()
	case c == 't':
		return w.literal("true")
	case c == 'f':
		return w.literal("false")
	case c == 'n':
		return w.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return w.num()
	}
	return w.syntax("looking for beginning of value")
}

func (w *walker) literal(lit string) error {
	for i := range len(lit) {
		if w.pos >= len(w.data) || w.data[w.pos] != lit[i] {
			return w.syntax("in literal " + lit)
		}
		w.pos++
	}
	return w.delimited()
}

// delimited refuses a scalar run into the next token ("truex", "01").
func (w *walker) delimited() error {
	if w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r', ',', ':', ']', '}':
		default:
			return w.syntax("after a value")
		}
	}
	return nil
}

// num reads a number as JSON spells it: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
func (w *walker) num() error {
	if w.data[w.pos] == '-' {
		w.pos++
	}
	switch {
	case w.pos < len(w.data) && w.data[w.pos] == '0':
		w.pos++
	case w.digits() == 0:
		return w.syntax("in numeric literal")
	}
	if w.pos < len(w.data) && w.data[w.pos] == '.' {
		w.pos++
		if w.digits() == 0 {
			return w.syntax("after decimal point in numeric literal")
		}
	}
	if w.pos < len(w.data) && (w.data[w.pos] == 'e' || w.data[w.pos] == 'E') {
		w.pos++
		if w.pos < len(w.data) && (w.data[w.pos] == '+' || w.data[w.pos] == '-') {
			w.pos++
		}
		if w.digits() == 0 {
			return w.syntax("in exponent of numeric literal")
		}
	}
	return w.delimited()
}

func (w *walker) digits() int {
	n := 0
	for w.pos < len(w.data) && '0' <= w.data[w.pos] && w.data[w.pos] <= '9' {
		w.pos++
		n++
	}
	return n
}

// str reads a string literal, checking its escapes; encoding/json takes
// any other bytes but control characters as they are.
func (w *walker) str() error {
	w.pos++ // the opening quote
	for w.pos < len(w.data) {
		c := w.data[w.pos]
		switch {
		case c == '"':
			w.pos++
			return nil
		case c < 0x20:
			return w.syntax("in string literal")
		case c == '\\':
			w.pos++
			if err := w.escape(); err != nil {
				return err
			}
		default:
			w.pos++
		}
	}
	return w.syntax("")
}

func (w *walker) escape() error {
	if w.pos >= len(w.data) {
		return w.syntax("")
	}
	switch w.data[w.pos] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		w.pos++
		return nil
	case 'u':
		w.pos++
		for range 4 {
			if w.pos >= len(w.data) || !isHex(w.data[w.pos]) {
				return w.syntax("in \\u hexadecimal character escape")
			}
			w.pos++
		}
		return nil
	}
	return w.syntax("in string escape code")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// text is the value of a string literal that str accepted.
func (w *walker) text(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(raw, &s) // str checked its escapes
	return s
}

// itemLimit is the maxItems tag of a list or map field: the most entries
// a spec may give it (the README's table of limits lists them). A list or
// map without one takes defaultMaxItems; a test checks that every one in
// Spec has one.
func itemLimit(f reflect.StructField) int {
	if n, err := strconv.Atoi(f.Tag.Get("maxItems")); err == nil && n > 0 {
		return n
	}
	return defaultMaxItems
}

func checkInt(p *problems, path string, raw any, bits int) {
	n, ok := raw.(json.Number)
	if !ok {
		p.add(path, "want an integer, got %s", raw)
		return
	}
	if _, err := strconv.ParseInt(string(n), 10, bits); err != nil {
		if f, ferr := strconv.ParseFloat(string(n), 64); ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			p.add(path, "want an integer without exponent or fraction, got %s", n)
			return
		}
		p.add(path, "want an integer, got %s", n)
	}
}

func checkFloat(p *problems, path string, raw any) {
	n, ok := raw.(json.Number)
	if !ok {
		p.add(path, "want a number, got %s", raw)
		return
	}
	if _, err := strconv.ParseFloat(string(n), 64); err != nil {
		p.add(path, "%s is out of range", n)
	}
}

// jsonFields maps the JSON names of t's exported fields to the fields,
// exactly as spelled: unlike encoding/json the strict decoder does not
// accept "Targets" for "targets".
func jsonFields(t reflect.Type) map[string]reflect.StructField {
	fields := make(map[string]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f
	}
	return fields
}

// kindOf names the JSON value that starts with c.
func kindOf(c byte) string {
	switch c {
	case 'n':
		return "null"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case '[':
		return "a list"
	case '{':
		return "an object"
	default:
		return "a number"
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknownField records a member of an object whose name is not one of
// fields, with the name it most likely meant, or the names it may take
// when there are few. Past the cap on problems it is only counted, as
// every problem is, so a body of a million unknown keys costs no more
// than their reading.
func (w *walker) unknownField(field, name string, fields map[string]reflect.StructField) {
	before := len(w.p.list) + w.p.omitted
	switch {
	case len(w.p.list) >= maxProblems || len(name) > maxSuggestable:
		w.p.add(field, "unknown field")
	default:
		w.p.add(field, "%s", unknownFieldMessage(name, slices.Sorted(maps.Keys(fields))))
	}
	w.unknown += len(w.p.list) + w.p.omitted - before
}
