package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"

	"github.com/benchq/benchq/internal/errcode"
)

// Decode reads one spec from r strictly: malformed JSON, trailing data after
// the object, unknown fields and values of the wrong type are refused, each
// named by its path ("sweep.concurrency[1]"), and so is a list or map with
// more entries than its field's maxItems tag allows ("sweep.concurrency
// has 330000 values; at most 64 are allowed"), checked while the list is
// read, before anything of it is kept. Every problem comes back at once in
// a *errcode.Error: an unknown field with the name it likely meant
// (`did you mean "concurrency"?`), malformed JSON with its line and
// column. Bounding the size of r is the caller's job (the API caps request
// bodies); Decode reads r to its end, and what it allocates stays within
// a small multiple of what it read.
//
// Decode checks shape only; Validate checks meaning.
func Decode(r io.Reader) (Spec, error) {
	s, unknown, err := decode(r, false)
	if err == nil && unknown != nil {
		err = Invalid(unknown)
	}
	return s, err
}

// DecodeLenient is Decode that does not let unknown fields hide the other
// problems of a spec: when they are all that is wrong with its shape, it
// returns the spec read without them and their problems as unknown, so a
// caller can validate the spec and refuse it with every problem at once.
// A spec with unknown fields must still be refused. Any other problem is
// its error, as Decode returns it.
func DecodeLenient(r io.Reader) (s Spec, unknown []FieldError, err error) {
	return decode(r, true)
}

func decode(r io.Reader, lenient bool) (Spec, []FieldError, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("job: read spec: %w", err)
	}
	w := walk(data, specType)
	probs := w.problems()
	if probs != nil && !(lenient && w.onlyUnknown()) {
		return Spec{}, nil, Invalid(probs)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	if probs == nil {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&s); err != nil {
		// The walk mirrors encoding/json's rules, so this is a bug in
		// it, or an unknown field encoding/json takes for a known one
		// (it ignores case); still a client error rather than a crash.
		if probs != nil {
			return Spec{}, nil, Invalid(probs)
		}
		return Spec{}, nil, Invalid([]FieldError{{Message: err.Error()}})
	}
	return s, probs, nil
}

// DecodeBody reads data into v, a pointer to a struct, as strictly as
// Decode reads a spec and with the same messages (the field's path,
// `did you mean`, line and column): for the API's other request bodies,
// which hold a spec's types. Its error is a malformed-body *errcode.Error
// listing every problem: a body not of its endpoint's shape.
func DecodeBody(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("job: DecodeBody wants a pointer to a struct, not %T", v)
	}
	w := walk(data, t.Elem())
	if w.fatal != nil {
		// As the API answers a spec it cannot read: the message alone.
		e := errcode.New(errcode.MalformedBody, w.fatal.Message)
		if w.fatal.Field != "" {
			e = e.WithField(w.fatal.Field)
		}
		return e
	}
	if probs := w.problems(); probs != nil {
		return errcode.Invalid(errcode.MalformedBody, probs)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errcode.Wrap(err, errcode.MalformedBody, "the request body does not fit its endpoint")
	}
	return nil
}
