// Package proctest builds the benchq binary and runs it as real processes
// for the fault suites: `benchq serve`, `benchq worker`, the all-in-one and
// `benchq keys`, each with its log kept so a test can wait for a line.
//
// Build compiles ./cmd/benchq once per test binary (the first caller
// builds, later callers reuse it), Start runs it with an environment the
// test gives (StartCmd a command the test built, e.g. behind taskset), and KeyedBase creates an API key with `benchq keys add` and
// returns the API's base URL with that key as its user, which Call sends
// as the bearer token. A started process is killed when its test ends;
// Main, a package's TestMain, removes the binary after its tests.
package proctest
