//go:build unix && !linux

package localredis

import "syscall"

// childAttr: as on Linux, but with no Pdeathsig here a child left by a
// killed benchq runs on until the next Start shuts it down.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
