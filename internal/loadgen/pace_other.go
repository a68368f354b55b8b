//go:build !linux

package loadgen

import "time"

// nudge is Linux's (pace_linux.go); elsewhere the open model paces with
// the runtime's timers alone.
type nudge struct{}

func newNudge() *nudge                   { return nil }
func (n *nudge) at(int64, time.Duration) {}
func (n *nudge) close()                  {}
