package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Decode reads one spec from r strictly: malformed JSON, trailing data after
// the object, unknown fields and values of the wrong type are refused, each
// named by its path ("sweep.concurrency[1]"). Every problem comes back at
// once in a *ValidationError. Bounding the size of r is the caller's job
// (the API caps request bodies); Decode reads r to its end.
//
// Decode checks shape only; Validate checks meaning.
func Decode(r io.Reader) (Spec, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Spec{}, fmt.Errorf("job: read spec: %w", err)
	}
	raw, fe := parseJSON(data)
	if fe != nil {
		return Spec{}, &ValidationError{Problems: []FieldError{*fe}}
	}
	var p problems
	checkShape(&p, "", specType, raw)
	if err := p.err(); err != nil {
		return Spec{}, err
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		// checkShape mirrors encoding/json's rules, so this is a bug in
		// it; still a client error rather than a crash.
		return Spec{}, &ValidationError{Problems: []FieldError{{Message: err.Error()}}}
	}
	return s, nil
}

// parseJSON decodes data into generic values (numbers kept as json.Number)
// and refuses an empty body, a body that is not an object, and anything
// after the first value.
func parseJSON(data []byte) (any, *FieldError) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &FieldError{Message: "body is empty: want a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, &FieldError{Message: "malformed JSON: " + syntaxMessage(err, data)}
	}
	if _, ok := raw.(map[string]any); !ok {
		return nil, &FieldError{Message: "body is " + kindOf(raw) + ": want a JSON object"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Message: fmt.Sprintf("unexpected data after the JSON object at byte %d", dec.InputOffset())}
	}
	return raw, nil
}

// syntaxMessage locates a syntax error by line and column, which is what a
// person fixing a hand-written spec needs.
func syntaxMessage(err error, data []byte) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return "unexpected end of input"
		}
		return err.Error()
	}
	line, col := 1, 1
	for _, b := range data[:min(int(se.Offset), len(data))] {
		if b == '\n' {
			line, col = line+1, 1
			continue
		}
		col++
	}
	return fmt.Sprintf("%v (line %d, column %d)", se, line, col)
}
