package main

import (
	"testing"

	"github.com/benchq/benchq/internal/proctest"
)

// TestMain removes the benchq binary that proctest built for the
// process-level tests.
func TestMain(m *testing.M) { proctest.Main(m) }
