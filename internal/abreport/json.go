package abreport

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON writes r as indented JSON followed by a newline.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("abreport: write json: %w", err)
	}
	return nil
}
