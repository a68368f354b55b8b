package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Decode reads one spec from r strictly: malformed JSON, trailing data after
// the object, unknown fields and values of the wrong type are refused, each
// named by its path ("sweep.concurrency[1]"), and so is a list or map with
// more entries than its field's maxItems tag allows ("sweep.concurrency
// has 330000 values; at most 64 are allowed"), checked while the list is
// read, before anything of it is kept. Every problem comes back at once in
// a *errcode.Error. Bounding the size of r is the caller's job (the API
// caps request bodies); Decode reads r to its end, and what it allocates
// stays within a small multiple of what it read.
//
// Decode checks shape only; Validate checks meaning.
func Decode(r io.Reader) (Spec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Spec{}, fmt.Errorf("job: read spec: %w", err)
	}
	if err := walkSpec(data); err != nil {
		return Spec{}, err
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		// The walk mirrors encoding/json's rules, so this is a bug in
		// it; still a client error rather than a crash.
		return Spec{}, Invalid([]FieldError{{Message: err.Error()}})
	}
	return s, nil
}
