package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/metric"
)

// The OpenAPI document lists a trend's metrics from the swag annotation;
// it must name exactly the metrics of the table the API accepts.
func TestTrendMetricEnumIsTheMetricTable(t *testing.T) {
	f, _ := reflect.TypeFor[TrendResponse]().FieldByName("Metric")
	if got, want := strings.Split(f.Tag.Get("enums"), ","), metric.Names(); !slices.Equal(got, want) {
		t.Errorf("TrendResponse.Metric enums = %v, want metric.Names() = %v", got, want)
	}
}
