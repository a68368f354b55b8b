// Package packagemap holds no code: its test keeps the module's
// dependency rules. The rules themselves are written once, for people, in
// docs/architecture.md's "The package map" section (floors, and which
// packages may use the large libraries); the test reads them from there
// and checks every package's imports against them with `go list`.
package packagemap
