package report

import (
	"encoding/json"
	"io"

	"github.com/benchq/benchq/internal/job"
)

// jsonReport is the JSON format's document: the job, every run with its
// ab-compatible result, and the analysis (aggregates, comparison,
// saturation, verdict).
type jsonReport struct {
	Job      *job.Job     `json:"job"`
	Runs     []job.Run    `json:"runs"`
	Analysis job.Analysis `json:"analysis"`
}

func writeJSON(w io.Writer, j *job.Job, runs []job.Run, a job.Analysis) error {
	views := runViews(j, runs)
	shown := *j
	shown.Analysis = nil // the document's analysis, not twice
	doc := jsonReport{Job: &shown, Runs: make([]job.Run, 0, len(views)), Analysis: a}
	for _, v := range views {
		// The stored measurement is for merging runs, and large; the
		// result says the same to a reader, as /results shows it.
		v.Run.Measurement = nil
		doc.Runs = append(doc.Runs, v.Run)
	}
	if doc.Analysis.Points == nil {
		doc.Analysis.Points = []job.PointSummary{} // [] rather than null for clients
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
