package job

// Capacity is one target's answer to the spec's search: the highest
// open-model rate at which every SLO held, and the probes it was read
// from (analysis.Capacity builds it).
type Capacity struct {
	Target string `json:"target"`
	// Rate estimates the capacity in requests a second: the geometric
	// middle of [CILow, CIHigh], or the last pass where no probe failed;
	// 0 when no rate passed.
	Rate float64 `json:"rate" example:"12400"`
	// CILow is the highest rate whose probes passed (by majority) below
	// CIHigh, lowered by the overload a probe of its length could not
	// show under the SLO's slack; CIHigh is the lowest rate whose probes
	// failed. 0 where there is none (no
	// pass: the capacity is below min_rate; no fail: it is at least
	// max_rate, or the search stopped before a fail).
	CILow  float64 `json:"ci_low" example:"12100"`
	CIHigh float64 `json:"ci_high" example:"12700"`
	// Reason says why the search ended: "converged" (the bracket is
	// within the precision, both edges confirmed), "max_rate" (the SLO
	// held at max_rate), "min_rate" (it failed at min_rate),
	// "client_saturated" (the load generator ran short of CPU: the rates
	// above CILow measured the client, so none is reported), "budget"
	// (max_duration or max_requests reached), "probe_limit", or
	// "incomplete" (the job ended first: canceled, or failed).
	Reason string `json:"reason" enums:"converged,max_rate,min_rate,client_saturated,budget,probe_limit,incomplete"`
	// LimitedBy names what held the target back at CIHigh, as a point's
	// limited_by: "client", "server_cpu" or "neither"; absent when it
	// cannot be told.
	LimitedBy string `json:"limited_by,omitempty" enums:"client,server_cpu,neither"`
	// Baseline and Pct compare Rate with the reference target's (the
	// spec's baseline, else the first target): +39 means 39 % more.
	// Absent on the reference, and where either rate is unknown.
	Baseline string          `json:"baseline,omitempty"`
	Pct      *float64        `json:"pct,omitempty"`
	Requests int64           `json:"requests"`
	ElapsedS float64         `json:"elapsed_s"`
	Probes   []CapacityProbe `json:"probes"`
}

// CapacityProbe is one probe: a stored run (its key's repeat is N) at an
// offered rate, judged against the SLO.
type CapacityProbe struct {
	N            int     `json:"n"`
	Rate         float64 `json:"rate"`
	AchievedRate float64 `json:"achieved_rate"`
	Passed       bool    `json:"passed"`
	// Failed lists the SLO entries the probe missed.
	Failed          []string `json:"failed,omitempty"`
	P50Ms           float64  `json:"p50_ms"`
	P99Ms           float64  `json:"p99_ms"`
	FailedRatio     float64  `json:"failed_ratio"`
	LateStarts      int64    `json:"late_starts"`
	ClientSaturated bool     `json:"client_saturated"`
	// ServerCPUShare is the share of the target's cores busy, from its
	// monitor; absent without one.
	ServerCPUShare *float64 `json:"server_cpu_share,omitempty"`
}
