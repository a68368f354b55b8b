package job

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CompareTo names the job a regression gate compares with: a job id, or a
// selector for the submitter's newest job carrying every one of Labels and
// in Status (succeeded unless given). In JSON it is either a string, the
// job id, or an object with these fields. The API resolves a selector at
// submission and records the job it found in JobID, so the verdict is
// computed against the same job however many jobs match later; a spec
// with both is a job id that must also match the selector.
type CompareTo struct {
	JobID  string            `json:"job_id,omitempty"`
	Labels map[string]string `json:"labels,omitempty" maxItems:"32"`
	Status Status            `json:"status,omitempty"`
}

// UnmarshalJSON accepts the string form as the job id.
func (c *CompareTo) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*c = CompareTo{}
		return json.Unmarshal(b, &c.JobID)
	}
	type plain CompareTo // without this method, so no recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = CompareTo(p)
	return nil
}

// IsSelector reports whether c selects by labels and status, rather than
// naming only a job id.
func (c CompareTo) IsSelector() bool { return len(c.Labels) > 0 || c.Status != "" }

// withDefaults makes a selector without a status select succeeded jobs:
// comparing with a failed or half-run job would gate on nothing.
func (c *CompareTo) withDefaults() *CompareTo {
	if c == nil || c.Status != "" || c.JobID != "" {
		return c
	}
	d := *c
	d.Status = StatusSucceeded
	return &d
}

// Matches reports whether j is what the selector part of c asks for.
func (c CompareTo) Matches(j *Job) bool {
	if c.Status != "" && j.Status != c.Status {
		return false
	}
	for k, v := range c.Labels {
		if got, ok := j.Spec.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// maxJobIDLen bounds a compare_to job id; our IDs are IDLen long, but an
// id is checked against the store, not its form.
const maxJobIDLen = 64

func (v *validator) compareTo(c *CompareTo) {
	if c == nil {
		return
	}
	const field = "compare_to"
	switch {
	case !c.IsSelector() && c.JobID == "":
		v.add(field, "want a job id or a selector such as {\"labels\": {\"branch\": \"main\"}}")
	case len(c.JobID) > maxJobIDLen || hasControl(c.JobID) || strings.TrimSpace(c.JobID) != c.JobID:
		v.add(field, "%q is not a job id", c.JobID)
	}
	switch c.Status {
	case "", StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusCanceled:
	default:
		v.add(field+".status", "unknown status %q: want queued, running, succeeded, failed or canceled", c.Status)
	}
	if len(c.Labels) > maxLabels {
		v.add(field+".labels", "%d labels exceed the limit of %d", len(c.Labels), maxLabels)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		if !validLabelKey(k) || len(c.Labels[k]) > maxLabelVal {
			v.add(field+".labels["+fmt.Sprintf("%q", k)+"]", "not a label of any job: names are 1 to %d letters, digits, '_', '-', '.' or '/', values at most %d characters", maxLabelKey, maxLabelVal)
		}
	}
}
