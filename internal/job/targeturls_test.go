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
		{Field: "targets[0].url", URL: "http://127.0.0.1:8081/a"},
		{Field: "targets[1].ab", URL: "http://127.0.0.1:8082/b"},
		{Field: "targets[2].urls[0]", URL: "http://127.0.0.1:8083/x"},
		{Field: "targets[2].urls[1]", URL: "http://127.0.0.1:8084/y"},
	}
	if got := s.WithDefaults().TargetURLs(); !reflect.DeepEqual(got, want) {
		t.Errorf("TargetURLs() = %v, want %v (no webhook, no invalid target)", got, want)
	}
}

func TestTargetURLsCarryHostHeaders(t *testing.T) {
	s := Spec{
		Request: Request{Headers: map[string]string{"host": "victim.example", "X-A": "1"}},
		Targets: []Target{
			{URL: "http://127.0.0.1:8081/a"},
			{URL: "http://127.0.0.1:8082/b", Request: &Request{Headers: map[string]string{"Host": "other.example:8082"}}},
			{AB: "-n 10 -H 'Host: ab.example' http://127.0.0.1:8083/c"},
			{URL: "http://127.0.0.1:8084/d", Request: &Request{}},
		},
	}
	want := [][]HostHeader{
		{{Field: `request.headers["host"]`, Value: "victim.example"}},
		{{Field: `targets[1].request.headers["Host"]`, Value: "other.example:8082"}},
		{{Field: "targets[2].ab", Value: "ab.example"}},
		nil,
	}
	got := s.WithDefaults().TargetURLs()
	if len(got) != len(want) {
		t.Fatalf("TargetURLs() = %v, want %d URLs", got, len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i].HostHeaders, want[i]) {
			t.Errorf("%s: HostHeaders = %v, want %v", got[i].Field, got[i].HostHeaders, want[i])
		}
	}
}
