package loadgen

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// nudge wakes the runtime at the open model's next intended start. Go's
// timers are exact while the process is busy, but an idle process sleeps
// in the poller's epoll_pwait, whose timeout is in whole milliseconds
// (below 1 ms it waits 1 ms): a start due in 300 µs would wait 1 ms, and
// at 1k req/s the median start was 0.7 ms late. A timerfd registered with
// the same poller and set to the next start ends that sleep to the
// microsecond, and the runtime, awake, runs the worker's timer on time.
// No goroutine reads the timerfd: its expiry alone wakes the poller. One
// per run, set once per start, so a start costs one timerfd_settime.
type nudge struct {
	mu   sync.Mutex
	f    *os.File
	fd   int
	slot int64 // the latest start the timerfd was set for; -1 none
}

// newNudge returns a run's nudge, or nil where the system gives no
// timerfd (the run then paces with the runtime's timers alone).
func newNudge() *nudge {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// Non-blocking, so os.NewFile registers it with the runtime's poller.
	return &nudge{f: os.NewFile(uintptr(fd), "pacing timerfd"), fd: fd, slot: -1}
}

// at sets the timerfd to fire in d, for start slot, unless a later start
// has set it already (starts run nearly in order; a late one must not
// take the timerfd back from the next). A start within sleepFloor needs
// none: its worker spins until it is due.
func (n *nudge) at(slot int64, d time.Duration) {
	if n == nil || d <= sleepFloor {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if slot <= n.slot {
		return
	}
	n.slot = slot
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_ = unix.TimerfdSettime(n.fd, 0, &spec, nil) // a failure costs precision only
}

func (n *nudge) close() {
	if n != nil {
		_ = n.f.Close()
	}
}
