package job

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/measure"
)

// TestHTTPVersionEnumsMatchEngine keeps the OpenAPI enum of
// request.http_version (a struct tag, which cannot name a constant) equal
// to the engine's list.
func TestHTTPVersionEnumsMatchEngine(t *testing.T) {
	f, _ := reflect.TypeFor[Request]().FieldByName("HTTPVersion")
	if got := strings.Split(f.Tag.Get("enums"), ","); !slices.Equal(got, measure.HTTPVersions()) {
		t.Errorf("Request.HTTPVersion enums = %q, want measure.HTTPVersions() %q", got, measure.HTTPVersions())
	}
}
