package job

import (
	"encoding/json"
	"fmt"
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
	for _, k := range sortedKeys(c.Labels) {
		if !validLabelKey(k) || len(c.Labels[k]) > maxLabelVal {
			v.add(field+".labels["+fmt.Sprintf("%q", k)+"]", "not a label of any job: names are 1 to %d letters, digits, '_', '-', '.' or '/', values at most %d characters", maxLabelKey, maxLabelVal)
		}
	}
}

// Baseline is the job a spec's compare_to resolved to, with its stored
// runs: what thresholds such as "rps >= 0.95 * baseline.rps" are held to.
type Baseline struct {
	JobID string
	Spec  Spec
	Runs  []Run
	// Gone, when set, says why the job's runs are not available; every
	// threshold that references the baseline then fails with it.
	Gone string
}

// MissingBaseline is the Baseline of a compare_to job no longer stored.
func MissingBaseline(id string) *Baseline {
	return &Baseline{JobID: id, Gone: fmt.Sprintf("baseline job %s no longer exists (expired or deleted)", id)}
}

// BaselineComparison sets every point that has runs beside the compare_to
// job's point of the same target and sweep values.
type BaselineComparison struct {
	JobID string `json:"job_id"`
	// Gone says why the baseline job could not be compared with.
	Gone  string         `json:"gone,omitempty"`
	Cells []BaselineCell `json:"cells,omitempty"`
}

// BaselineCell is one point of this job against the baseline job's.
type BaselineCell struct {
	Point Point `json:"point"`
	// BaselinePoint is the matching point's index in the baseline job, -1
	// when it has none with runs; the other baseline fields are then 0.
	BaselinePoint int     `json:"baseline_point"`
	RPS           float64 `json:"rps"`
	BaselineRPS   float64 `json:"baseline_rps"`
	P99Ms         float64 `json:"p99_ms"`
	BaselineP99Ms float64 `json:"baseline_p99_ms"`
	// Comparison is this point relative to the baseline job's, in percent
	// of the latter; its Baseline field holds the baseline job id.
	Comparison *Comparison `json:"comparison,omitempty"`
}

// cellKey identifies a point across jobs: two jobs' points are the same
// cell when target name, concurrency and requests/duration/rate agree,
// whatever their indexes.
type cellKey struct {
	target      string
	concurrency int
	slice       sliceKey
}

func keyOfCell(p Point) cellKey {
	return cellKey{target: p.Target, concurrency: p.Concurrency, slice: sliceOf(p)}
}

// baselineCells is a Baseline's runs grouped by cell.
type baselineCells struct {
	jobID string
	gone  string
	cells map[cellKey]pointRuns
}

func indexBaseline(b *Baseline) *baselineCells {
	if b == nil {
		return nil
	}
	bc := &baselineCells{jobID: b.JobID, gone: b.Gone, cells: map[cellKey]pointRuns{}}
	if b.Gone != "" {
		return bc
	}
	for _, c := range groupRuns(b.Spec.Points(), b.Runs) {
		bc.cells[keyOfCell(c.point)] = c
	}
	return bc
}

func (b *baselineCells) usable() bool { return b != nil && b.gone == "" }

func (b *baselineCells) id() string {
	if b == nil {
		return ""
	}
	return b.jobID
}

func (b *baselineCells) whyUnusable() string {
	if b == nil {
		return "the threshold references baseline but no compare_to job was loaded to compare with"
	}
	return b.gone
}

// compareWithBaseline builds the Analysis's CompareTo, nil without a
// baseline.
func compareWithBaseline(points []PointSummary, base *baselineCells) *BaselineComparison {
	if base == nil {
		return nil
	}
	bc := &BaselineComparison{JobID: base.jobID, Gone: base.gone}
	if base.gone != "" {
		return bc
	}
	for _, ps := range points {
		if ps.Runs == 0 {
			continue
		}
		cell := BaselineCell{Point: ps.Point, BaselinePoint: -1, RPS: ps.RPS.Mean, P99Ms: ps.PercentilesMs["99"].Mean}
		if b, ok := base.cells[keyOfCell(ps.Point)]; ok && len(b.reports) > 0 {
			bs := summarise(b.point, b.reports)
			cell.BaselinePoint = b.point.Index
			cell.BaselineRPS, cell.BaselineP99Ms = bs.RPS.Mean, bs.PercentilesMs["99"].Mean
			cell.Comparison = compare(base.jobID, bs, ps)
		}
		bc.Cells = append(bc.Cells, cell)
	}
	return bc
}
