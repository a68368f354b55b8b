package job

import (
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/netguard"
)

// TestValidateWithNetguard plugs the real address policy in, as the API
// does: netguard's CheckURL is a URLChecker.
func TestValidateWithNetguard(t *testing.T) {
	check := URLChecker(netguard.LoopbackOnly().CheckURL)
	s := validSpec()
	if err := s.Validate(DefaultLimits(), check); err != nil {
		t.Fatalf("Validate(loopback targets) = %v, want nil", err)
	}
	s.Targets[1].URL = "http://10.0.0.1:8080/"
	s.Targets = append(s.Targets, Target{Name: "mapped", URL: "http://[::ffff:192.168.1.1]/"})
	s.Webhook = &Webhook{URL: "http://169.254.169.254/latest/meta-data/"}
	got := fields(t, s.Validate(DefaultLimits(), check))
	for _, want := range []string{"targets[1].url", "targets[2].url", "webhook.url"} {
		if !slices.Contains(got, want) {
			t.Errorf("Validate fields = %v, want %s among them", got, want)
		}
	}
}
