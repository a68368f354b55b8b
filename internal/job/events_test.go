package job

import (
	"slices"
	"testing"
)

func TestIsFinalEvent(t *testing.T) {
	tests := []struct {
		typ  string
		want bool
	}{
		{"job.finished", true},
		{"job.succeeded", true},
		{"job.failed", true},
		{"job.canceled", true},
		{"job.started", false},
		{"progress", false},
		{"run.finished", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsFinalEvent(tt.typ); got != tt.want {
			t.Errorf("IsFinalEvent(%q) = %v, want %v", tt.typ, got, tt.want)
		}
	}
}

// TestEventForTerminalStatuses: every terminal status names a webhook
// event a spec may list, and that event ends a stream.
func TestEventForTerminalStatuses(t *testing.T) {
	for _, s := range []Status{StatusSucceeded, StatusFailed, StatusCanceled} {
		e := EventFor(s)
		if !slices.Contains(TerminalEvents(), e) || !slices.Contains(WebhookEvents(), e) || !IsFinalEvent(e) {
			t.Errorf("EventFor(%s) = %q: want a terminal, listable and final event", s, e)
		}
	}
	if got, want := eventChoices(WebhookEvents()), "job.started, job.succeeded, job.failed or job.canceled"; got != want {
		t.Errorf("eventChoices(WebhookEvents()) = %q, want %q", got, want)
	}
}
