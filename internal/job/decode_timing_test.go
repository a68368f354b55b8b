package job

import (
	"bytes"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// hostileSpecs are specs of about size bytes that each push one list (or
// the nesting, the number of distinct problems, an ab line) as far as the
// size allows.
func hostileSpecs(size int) map[string][]byte {
	fill := func(head, item, tail string) []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := 0; b.Len()+len(item)+len(tail) < size; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.ReplaceAll(item, "$", fmt.Sprint(i)))
		}
		b.WriteString(tail)
		return []byte(b.String())
	}
	const target = `{"targets":[{"url":"http://127.0.0.1:8080/"}],`
	// Targets of ab lines with many headers, as many as allowed: a valid
	// spec, and the one that costs the most to validate per byte.
	var ab strings.Builder
	ab.WriteString(`{"targets":[`)
	perLine := min(250, size/256/7)
	for i := range 256 {
		if i > 0 {
			ab.WriteByte(',')
		}
		fmt.Fprintf(&ab, `{"name":"t%d","ab":"-n 10 -c 1%s http://127.0.0.1:8080/"}`, i, strings.Repeat(" -H a:b", perLine))
	}
	ab.WriteString(`]}`)
	abTargets := []byte(ab.String())
	return map[string][]byte{
		"concurrency": fill(target+`"sweep":{"concurrency":[`, `1`, `]}}`),
		"distinct":    fill(target+`"sweep":{"concurrency":[`, `$`, `]}}`),
		"targets":     fill(`{"targets":[`, `{"url":"http://127.0.0.1:8080/$"}`, `]}`),
		"headers":     fill(target+`"request":{"headers":{`, `"X-$":"v"`, `}}}`),
		"thresholds":  fill(target+`"thresholds":[`, `"p$ < 1"`, `]}`),
		"nested":      []byte(target + `"x":` + strings.Repeat("[", size/2-60) + strings.Repeat("]", size/2-60) + `}`),
		"ab-headers":  fill(`{"targets":[{"ab":"-n 10 -c 1`, ` -H 'X-$: v'`, ` http://127.0.0.1:8080/"}]}`),
		"ab-targets":  abTargets,
		"ab-long":     []byte(`{"targets":[{"ab":"-n 10 -c 1 -H 'X: ` + strings.Repeat("v", size-100) + `' http://127.0.0.1:8080/"}]}`),
		"urls":        fill(`{"targets":[{"http_load":"-parallel 1 -fetches 10","urls":[`, `"http://127.0.0.1:8080/$"`, `]}]}`),
		"unknown":     fill(`{"targets":[{"url":"http://127.0.0.1:8080/"}],`, `"f$":0`, `}`),
	}
}

// BenchmarkDecodeHostile decodes and validates 1 MiB hostile specs as the
// API does, reporting the bytes allocated per byte of spec.
func BenchmarkDecodeHostile(b *testing.B) {
	specs := hostileSpecs(1 << 20)
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		data := specs[name]
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if s, err := Decode(bytes.NewReader(data)); err == nil {
					_ = s.Validate(DefaultLimits(), nil)
				}
			}
			runtime.ReadMemStats(&after)
			perByte := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N) / float64(len(data))
			b.ReportMetric(perByte, "alloc-B/spec-B")
		})
	}
}
