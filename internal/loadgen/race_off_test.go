//go:build !race

package loadgen

// raceDetector says the tests run under -race, which slows the engine
// several times over: timing tolerances widen with it.
const raceDetector = false
