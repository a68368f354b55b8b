//go:build !unix

package localredis

import (
	"errors"
	"fmt"
	"os"
)

// lockFile is unsupported off unix, and with it the redis-server child:
// the all-in-one command runs with --ephemeral there.
func lockFile(*os.File) error {
	return fmt.Errorf("lock a data directory: %w (run with --ephemeral)", errors.ErrUnsupported)
}
