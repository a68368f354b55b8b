package hostile

import (
	"os"
	"testing"

	"github.com/benchq/benchq/internal/proctest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}
