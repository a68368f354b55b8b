package abreport

// Report is one run's result in ApacheBench's terms: one JSON field per line
// of ab's report, same meaning and units (DESIGN.md §3). The helper that
// builds this package fills in the fields and FromMeasurement.
type Report struct {
	ServerSoftware string `json:"server_software"`
}
