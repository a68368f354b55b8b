package measure

import (
	"strings"
	"testing"
)

func TestHTTPVersions(t *testing.T) {
	if got, want := HTTPVersionChoices(), "1.0, 1.1 or 2"; got != want {
		t.Errorf("HTTPVersionChoices() = %q, want %q", got, want)
	}
	for _, v := range HTTPVersions() {
		if !KnownHTTPVersion(v) {
			t.Errorf("KnownHTTPVersion(%q) = false, want true", v)
		}
		if err := (Plan{URLs: []string{"http://127.0.0.1/"}, Concurrency: 1, Requests: 1, HTTPVersion: v}).Validate(); err != nil {
			t.Errorf("Plan{HTTPVersion: %q}.Validate() = %v, want nil", v, err)
		}
	}
	for _, v := range []string{"", "1", "2.0", "h2", "HTTP/1.1", "3"} {
		if KnownHTTPVersion(v) {
			t.Errorf("KnownHTTPVersion(%q) = true, want false", v)
		}
	}
	err := (Plan{URLs: []string{"http://127.0.0.1/"}, Concurrency: 1, Requests: 1, HTTPVersion: "h2"}).Validate()
	if err == nil || !strings.Contains(err.Error(), `"h2" is not 1.0, 1.1 or 2`) {
		t.Errorf(`Plan{HTTPVersion: "h2"}.Validate() = %v, want "\"h2\" is not 1.0, 1.1 or 2"`, err)
	}
}
