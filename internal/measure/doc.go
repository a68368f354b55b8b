// Package measure is the vocabulary of a benchmark run, shared by the load
// engine (internal/loadgen) and everything that plans runs or reads their
// outcome without driving load: a Plan (what to send, how many, how hard,
// with the Guard that admits each address), the Measurement it yields (ab's
// counters, the failure classes, status codes and, per timing phase, exact
// count, sums and extremes plus an HdrHistogram, and the run's Timeline,
// interval by interval) and the rules on it (Merge, Quantile, Mean, StdDev,
// ClientSaturated).
//
// It does not import the engine or fasthttp, so the API, the job rules and
// the report builders link neither.
//
// A Measurement is stored with EncodeMeasurement: JSON with every phase's
// histogram in HdrHistogram's V2 compressed encoding. DecodeMeasurement
// gives back a measurement that merges and reports exactly as the original
// (only the raw Samples are not kept), so runs measured on several
// processes, or stored at different times, merge bucket for bucket.
package measure
