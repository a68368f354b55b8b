package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration
// string ("1m30s"). For curl users it also reads a plain JSON number as
// seconds (30 or 0.25); it always writes the string form. Negative values
// are refused when decoding: no duration in a spec can be negative.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String formats d as time.Duration does ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var raw any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("job: duration: %w", err)
	}
	v, err := parseDuration(raw)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

var errDurationType = errors.New(`want a duration such as "1m30s" or a number of seconds`)

// parseDuration turns a decoded JSON value (string or json.Number) into a
// Duration. It is shared by UnmarshalJSON and the strict decoder, which
// reports the field path around the error.
func parseDuration(raw any) (Duration, error) {
	var d time.Duration
	switch v := raw.(type) {
	case string:
		parsed, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as \"1m30s\"", v)
		}
		d = parsed
	case json.Number:
		secs, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsInf(secs, 0) || math.Abs(secs) > float64(math.MaxInt64)/float64(time.Second) {
			return 0, fmt.Errorf("%s seconds is out of range", v)
		}
		d = time.Duration(math.Round(secs * float64(time.Second)))
	default:
		return 0, errDurationType
	}
	if d < 0 {
		return 0, fmt.Errorf("%v is negative", d)
	}
	return Duration(d), nil
}
