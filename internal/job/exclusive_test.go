package job

import (
	"slices"
	"testing"
	"time"
)

func TestTargetHosts(t *testing.T) {
	tests := []struct {
		name    string
		targets []Target
		want    []string
	}{
		{"default http port", []Target{{URL: "http://127.0.0.1/x"}}, []string{"127.0.0.1:80"}},
		{"default https port", []Target{{URL: "HTTPS://Example.COM/"}}, []string{"example.com:443"}},
		{"explicit port, lowercased host", []Target{{URL: "http://LOCALHOST:8080/a"}}, []string{"localhost:8080"}},
		{"ipv6", []Target{{URL: "http://[::1]:9000/"}}, []string{"[::1]:9000"}},
		{"one host twice, paths and schemes apart",
			[]Target{{Name: "a", URL: "http://127.0.0.1:80/a"}, {Name: "b", URL: "http://127.0.0.1/b"}},
			[]string{"127.0.0.1:80"}},
		{"sorted, distinct ports", []Target{{Name: "a", URL: "http://127.0.0.1:9/"}, {Name: "b", URL: "http://127.0.0.1:10/"}},
			[]string{"127.0.0.1:10", "127.0.0.1:9"}},
		{"ab line", []Target{{AB: "ab -n 10 -c 1 http://127.0.0.2:81/"}}, []string{"127.0.0.2:81"}},
		{"http_load urls", []Target{{HTTPLoad: "http_load -parallel 1 -fetches 10", URLs: []string{"http://127.0.0.1:1/", "http://127.0.0.1:2/", "http://127.0.0.1:1/x"}}},
			[]string{"127.0.0.1:1", "127.0.0.1:2"}},
		{"invalid target lists nothing", []Target{{URL: "http://127.0.0.1/", AB: "ab http://127.0.0.1/"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Spec{Targets: tt.targets}.WithDefaults().TargetHosts()
			if !slices.Equal(got, tt.want) {
				t.Errorf("TargetHosts() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsExclusive(t *testing.T) {
	no, yes := false, true
	tests := []struct {
		name string
		spec Spec
		want bool
	}{
		{"unset (a spec stored before the field)", Spec{}, true},
		{"defaulted", Spec{}.WithDefaults(), true},
		{"true", Spec{Exclusive: &yes}, true},
		{"false", Spec{Exclusive: &no}, false},
		{"false survives defaults", Spec{Exclusive: &no}.WithDefaults(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.IsExclusive(); got != tt.want {
				t.Errorf("IsExclusive() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestQueuedReasonClearedOnStart: the reason a job waited is about its
// wait; once it runs (or ends) it would mislead.
func TestQueuedReasonClearedOnStart(t *testing.T) {
	for _, to := range []Status{StatusRunning, StatusCanceled} {
		t.Run(string(to), func(t *testing.T) {
			j := New("j", "", Spec{Targets: []Target{{URL: "http://127.0.0.1/"}}}.WithDefaults(), time.Now())
			j.QueuedReason = "waiting for target 127.0.0.1:80, held by job x"
			if err := j.Transition(to, time.Now()); err != nil {
				t.Fatal(err)
			}
			if j.QueuedReason != "" {
				t.Errorf("after queued -> %s QueuedReason = %q, want empty", to, j.QueuedReason)
			}
		})
	}
}
