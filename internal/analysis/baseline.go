package analysis

import (
	"fmt"

	"github.com/benchq/benchq/internal/job"
)

// Baseline is the job a spec's compare_to resolved to, with its stored
// runs: what thresholds such as "rps >= 0.95 * baseline.rps" are held to.
type Baseline struct {
	JobID string
	Spec  job.Spec
	Runs  []job.Run
	// Gone, when set, says why the job's runs are not available; every
	// threshold that references the baseline then fails with it.
	Gone string
}

// MissingBaseline is the Baseline of a compare_to job no longer stored.
func MissingBaseline(id string) *Baseline {
	return &Baseline{JobID: id, Gone: fmt.Sprintf("baseline job %s no longer exists (expired or deleted)", id)}
}

// cellKey identifies a point across jobs: two jobs' points are the same
// cell when target name, concurrency and requests/duration/rate agree,
// whatever their indexes.
type cellKey struct {
	target      string
	concurrency int
	slice       sliceKey
}

func keyOfCell(p job.Point) cellKey {
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
func compareWithBaseline(points []summary, base *baselineCells) *job.BaselineComparison {
	if base == nil {
		return nil
	}
	bc := &job.BaselineComparison{JobID: base.jobID, Gone: base.gone}
	if base.gone != "" {
		return bc
	}
	for _, ps := range points {
		if ps.Runs == 0 {
			continue
		}
		cell := job.BaselineCell{Point: ps.Point, BaselinePoint: -1, RPS: ps.RPS.Mean, P99Ms: ps.PercentilesMs["99"].Mean}
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
