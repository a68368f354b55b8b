package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/abreport"
	"github.com/benchq/benchq/internal/job"
)

// runColumns lead every CSV row: which run of which point it is. point
// and repeat are the indexes the JSON results and the API use (both from
// 0), so a row joins with /results and the run's keys without arithmetic.
func runColumns() []string {
	return []string{"target", "point", "concurrency", "requests", "duration", "rate", "repeat"}
}

// abortColumns close every CSV row: the threshold that aborted the run
// and why, both empty for a run that went to its end. Last, so the
// columns before keep their places.
func abortColumns() []string { return []string{"aborted_by", "abort_reason"} }

// writeCSV writes one row per run: the run's point, then every scalar
// field of its abreport.Report, nested structs flattened with "_" between
// their JSON names (connection_times_ms_total_median, percentiles_ms_99),
// then abortColumns. The columns come from the Report type by reflection,
// so a field added to the result model appears here without anyone
// remembering this file.
func writeCSV(w io.Writer, j *job.Job, runs []job.Run) error {
	cw := csv.NewWriter(w)
	head := runColumns()
	for _, c := range flatten(reflect.ValueOf(abreport.Report{}), "") {
		head = append(head, c.name)
	}
	head = append(head, abortColumns()...)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, v := range runViews(j, runs) {
		row := []string{
			textCell(v.Point.Target), strconv.Itoa(v.Point.Index), strconv.Itoa(v.Point.Concurrency),
			optional(v.Point.Requests != 0, strconv.Itoa(v.Point.Requests)),
			optional(v.Point.Duration != 0, v.Point.Duration.String()),
			optional(v.Point.Rate != 0, floatCell(v.Point.Rate)), strconv.Itoa(v.Repeat),
		}
		for _, c := range flatten(reflect.ValueOf(*v.Result), "") {
			row = append(row, c.value)
		}
		row = append(row, textCell(v.AbortedBy), textCell(v.AbortReason))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

type column struct{ name, value string }

// flatten lists the scalar fields of a struct value under their JSON names.
// The encoded latency histogram is left out: it is a blob for merging, not
// a number anyone reads in a spreadsheet.
func flatten(v reflect.Value, prefix string) []column {
	var out []column
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "latency_histogram" {
			continue
		}
		out = append(out, flattenValue(v.Field(i), prefix+name)...)
	}
	return out
}

func flattenValue(f reflect.Value, name string) []column {
	switch {
	case f.Type() == reflect.TypeFor[time.Time]():
		return []column{{name, timeCell(f.Interface().(time.Time))}}
	case f.Kind() == reflect.Struct:
		return flatten(f, name+"_")
	case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
		if f.IsNil() {
			return flatten(reflect.Zero(f.Type().Elem()), name+"_")
		}
		return flatten(f.Elem(), name+"_")
	case f.Kind() == reflect.Pointer:
		// An optional number (the open model's rates): empty when absent,
		// so a spreadsheet does not average in zeros.
		if f.IsNil() {
			return []column{{name, ""}}
		}
		return []column{{name, scalarCell(f.Elem())}}
	}
	return []column{{name, scalarCell(f)}}
}

// scalarCell formats one field; maps and slices become one cell each
// ("200:998 500:2", hints joined by "; ") so the column set stays fixed.
// Text (strings, maps, slices) goes through textCell; numbers and
// booleans are strconv's and stay as they are, a negative one included.
func scalarCell(f reflect.Value) string {
	switch f.Kind() {
	case reflect.String:
		return textCell(f.String())
	case reflect.Bool:
		return strconv.FormatBool(f.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(f.Int(), 10)
	case reflect.Float32, reflect.Float64:
		return floatCell(f.Float())
	case reflect.Map:
		return textCell(mapCell(f))
	case reflect.Slice:
		parts := make([]string, f.Len())
		for i := range parts {
			parts[i] = fmt.Sprint(f.Index(i).Interface())
		}
		return textCell(strings.Join(parts, "; "))
	}
	return fmt.Sprint(f.Interface())
}

func mapCell(f reflect.Value) string {
	m := map[string]string{}
	for _, k := range f.MapKeys() {
		m[fmt.Sprint(k.Interface())] = fmt.Sprint(f.MapIndex(k).Interface())
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + m[k]
	}
	return strings.Join(parts, " ")
}

// textCell defuses a text cell a spreadsheet would run as a formula, as
// OWASP's CSV injection advice says: one that starts with =, +, -, @, a
// tab or a carriage return gets a leading single quote. Text reaches a
// report from a job's owner and from the target it measured (a target's
// name, its Server header, an error), so whoever opens the file must not
// run it. Numbers are not text: "-18.6" in a numeric column is data, and
// only cells written by strconv reach those columns.
func textCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func floatCell(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// optional leaves the cell of a stop condition the point does not use
// empty, so a spreadsheet does not average in zeros.
func optional(set bool, v string) string {
	if !set {
		return ""
	}
	return v
}

func timeCell(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
