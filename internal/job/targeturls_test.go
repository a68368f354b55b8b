package job

import (
	"reflect"
	"testing"
)

func TestTargetURLsNamesEveryLoadAddress(t *testing.T) {
	s := Spec{
		Targets: []Target{
			{Name: "a", URL: "http://127.0.0.1:8081/a"},
			{Name: "b", AB: "-n 10 -c 1 http://127.0.0.1:8082/b"},
			{Name: "c", HTTPLoad: "-parallel 1 -fetches 10", URLs: []string{"http://127.0.0.1:8083/x", "http://127.0.0.1:8084/y"}},
			{Name: "bad", URL: "http://127.0.0.1:1/", AB: "-n 1 http://127.0.0.1:2/"},
		},
		Webhook: &Webhook{URL: "http://127.0.0.1:9000/hook"},
	}
	want := []TargetURL{
		{"targets[0].url", "http://127.0.0.1:8081/a"},
		{"targets[1].ab", "http://127.0.0.1:8082/b"},
		{"targets[2].urls[0]", "http://127.0.0.1:8083/x"},
		{"targets[2].urls[1]", "http://127.0.0.1:8084/y"},
	}
	if got := s.WithDefaults().TargetURLs(); !reflect.DeepEqual(got, want) {
		t.Errorf("TargetURLs() = %v, want %v (no webhook, no invalid target)", got, want)
	}
}
