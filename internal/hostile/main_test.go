package hostile

import (
	"testing"

	"github.com/benchq/benchq/internal/proctest"
)

func TestMain(m *testing.M) { proctest.Main(m) }
