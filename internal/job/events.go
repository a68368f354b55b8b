package job

import (
	"slices"
	"strings"
)

// The names of what happens to a job, in one table: the job's event stream
// (written by the worker and jobend, read by the API's SSE, the client's
// Follow and the dashboard's live view) and its webhooks (listed in
// webhook.events, sent by the worker) share them.
const (
	// EventStarted opens a job's stream; a webhook gets it only when it
	// lists it: most receivers care about the end.
	EventStarted = "job.started"
	// EventProgress, EventRunIntervals and EventRunFinished are stream
	// events only. EventRunIntervals carries intervals of the current
	// run's timeline as they close, a few at a time.
	EventProgress     = "progress"
	EventRunIntervals = "run.intervals"
	EventRunFinished  = "run.finished"
	// EventFinished is always the last event of a job's stream.
	EventFinished = "job.finished"
	// The webhook events of the terminal statuses, "job." + status.
	EventSucceeded = "job.succeeded"
	EventFailed    = "job.failed"
	EventCanceled  = "job.canceled"
	// EventChangePoint is a webhook event only: the end of a job of a
	// template found new change points in the template's history (sent
	// once per change point, with the job whose end found it).
	EventChangePoint = "trend.change_point"
)

// EventFor names the webhook event of a terminal status: "job." + status.
func EventFor(s Status) string { return "job." + string(s) }

// TerminalEvents are the webhook events of the terminal statuses, the
// events a webhook without an events list gets.
func TerminalEvents() []string { return []string{EventSucceeded, EventFailed, EventCanceled} }

// Subscribed lists the events w asks for: its events, or TerminalEvents
// when it lists none (WithDefaults fills them in the same way).
func (w Webhook) Subscribed() []string {
	if len(w.Events) == 0 {
		return TerminalEvents()
	}
	return w.Events
}

// StreamEvents are the events of a job's stream before its final one, in
// the order a run writes them first.
func StreamEvents() []string {
	return []string{EventStarted, EventProgress, EventRunIntervals, EventRunFinished}
}

// WebhookEvents are the events webhook.events may list.
func WebhookEvents() []string {
	return append(append([]string{EventStarted}, TerminalEvents()...), EventChangePoint)
}

// FinalEvents are the event types after which no event follows in a job's
// stream: job.finished, and the terminal webhook events, which a reader
// takes as final too.
func FinalEvents() []string { return append([]string{EventFinished}, TerminalEvents()...) }

// IsFinalEvent reports whether typ is one of FinalEvents.
func IsFinalEvent(typ string) bool { return slices.Contains(FinalEvents(), typ) }

// eventChoices names events for a message: "a, b, c or d".
func eventChoices(events []string) string {
	if len(events) < 2 {
		return strings.Join(events, "")
	}
	return strings.Join(events[:len(events)-1], ", ") + " or " + events[len(events)-1]
}

// A job's notify (Notify) makes deliveries that its delivery log lists
// beside the webhook's, named by forge and what they send:
// "github.status.pending" when the job starts, "github.status.success"
// (failure, error) when it ends, and "github.comment". A job has at most
// one delivery of each name, as it has of each webhook event.
const forgeStatus = ".status."

// ForgeStatusDelivery names the delivery that sets a forge's commit
// status to state.
func ForgeStatusDelivery(forge, state string) string { return forge + forgeStatus + state }

// ForgeCommentDelivery names the delivery that writes the request
// comment on a forge.
func ForgeCommentDelivery(forge string) string { return forge + ".comment" }

// ForgeDelivery reports whether name is a forge delivery's, and which
// forge's.
func ForgeDelivery(name string) (forge string, ok bool) {
	for _, f := range []string{ForgeGitHub, ForgeGitLab} {
		if strings.HasPrefix(name, f+forgeStatus) || name == ForgeCommentDelivery(f) {
			return f, true
		}
	}
	return "", false
}
