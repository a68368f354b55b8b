package main

import (
	"os"
	"testing"

	"github.com/benchq/benchq/internal/proctest"
)

// TestMain removes the benchq binary that proctest built for the
// process-level tests.
func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}
