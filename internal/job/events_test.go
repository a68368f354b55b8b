package job

import (
	"slices"
	"testing"
)

func TestIsFinalEvent(t *testing.T) {
	for _, typ := range []string{"job.finished", "job.succeeded", "job.failed", "job.canceled"} {
		if !IsFinalEvent(typ) {
			t.Errorf("IsFinalEvent(%q) = false, want true: no event follows it", typ)
		}
	}
	for _, typ := range []string{"job.started", "progress", "run.finished", ""} {
		if IsFinalEvent(typ) {
			t.Errorf("IsFinalEvent(%q) = true, want false: the stream goes on after it", typ)
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
	if got, want := eventChoices(WebhookEvents()), "job.started, job.succeeded, job.failed, job.canceled or trend.change_point"; got != want {
		t.Errorf("eventChoices(WebhookEvents()) = %q, want %q", got, want)
	}
}
