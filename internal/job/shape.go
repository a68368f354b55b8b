package job

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// The strict decoder walks the generic JSON tree against the Go types of
// Spec, so it can name the exact path of each problem, which encoding/json
// does not (it stops at the first error and drops list indexes).
var (
	specType     = reflect.TypeFor[Spec]()
	durationType = reflect.TypeFor[Duration]()
)

// checkShape reports every place where raw does not fit t. JSON null fits
// everything (it leaves the zero value, as encoding/json does).
func checkShape(p *problems, path string, t reflect.Type, raw any) {
	if raw == nil {
		return
	}
	if t == compareToType {
		checkCompareTo(p, path, raw)
		return
	}
	if t == durationType {
		if _, err := parseDuration(raw); err != nil {
			p.add(path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkShape(p, path, t.Elem(), raw)
	case reflect.Struct:
		checkObject(p, path, t, raw)
	case reflect.Map:
		checkMap(p, path, t, raw)
	case reflect.Slice:
		checkList(p, path, t, raw)
	case reflect.String:
		if _, ok := raw.(string); !ok {
			p.add(path, "want a string, got %s", kindOf(raw))
		}
	case reflect.Bool:
		if _, ok := raw.(bool); !ok {
			p.add(path, "want true or false, got %s", kindOf(raw))
		}
	case reflect.Int, reflect.Int64:
		checkInt(p, path, raw, t.Bits())
	case reflect.Float64:
		checkFloat(p, path, raw)
	default:
		p.add(path, "field of unsupported type %s", t)
	}
}

func checkObject(p *problems, path string, t reflect.Type, raw any) {
	obj, ok := raw.(map[string]any)
	if !ok {
		p.add(path, "want an object, got %s", kindOf(raw))
		return
	}
	fields := jsonFields(t)
	for _, key := range sortedKeys(obj) {
		f, known := fields[key]
		if !known {
			p.add(join(path, key), "unknown field")
			continue
		}
		checkShape(p, join(path, key), f.Type, obj[key])
	}
}

func checkMap(p *problems, path string, t reflect.Type, raw any) {
	obj, ok := raw.(map[string]any)
	if !ok {
		p.add(path, "want an object, got %s", kindOf(raw))
		return
	}
	for _, key := range sortedKeys(obj) {
		checkShape(p, path+"["+strconv.Quote(key)+"]", t.Elem(), obj[key])
	}
}

func checkList(p *problems, path string, t reflect.Type, raw any) {
	list, ok := raw.([]any)
	if !ok {
		p.add(path, "want a list, got %s", kindOf(raw))
		return
	}
	for i, v := range list {
		checkShape(p, index(path, i), t.Elem(), v)
	}
}

func checkInt(p *problems, path string, raw any, bits int) {
	n, ok := raw.(json.Number)
	if !ok {
		p.add(path, "want an integer, got %s", kindOf(raw))
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
		p.add(path, "want a number, got %s", kindOf(raw))
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

func kindOf(raw any) string {
	switch raw.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return "an unknown value"
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
