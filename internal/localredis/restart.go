package localredis

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errStopped: Stop began, so no child is started any more.
var errStopped = errors.New("redis-server stopped")

// RestartPolicy says how a child that exits on its own (killed, crashed,
// out of memory at the kernel's hand) is started again, on the same data
// directory and socket: its append-only file brings the data back.
// Zero fields take the defaults named.
type RestartPolicy struct {
	// Enabled turns restarting on.
	Enabled bool
	// MinWait is the wait before the first restart; 0 means 100 ms. Each
	// further exit before a child ran Stable doubles it.
	MinWait time.Duration
	// MaxWait caps the wait; 0 means 5 s.
	MaxWait time.Duration
	// Stable is how long a child must have answered for the wait to
	// start again from MinWait after it exits; 0 means 10 s.
	Stable time.Duration
	// GiveUpAfter is how many immediate failures in a row (children that
	// exited, or could not start, before they answered) end the
	// restarts: Done closes with the last one's reason. 0 means 5.
	GiveUpAfter int
}

func (p RestartPolicy) withDefaults() RestartPolicy {
	if p.MinWait <= 0 {
		p.MinWait = 100 * time.Millisecond
	}
	if p.MaxWait <= 0 {
		p.MaxWait = 5 * time.Second
	}
	if p.Stable <= 0 {
		p.Stable = 10 * time.Second
	}
	if p.GiveUpAfter <= 0 {
		p.GiveUpAfter = 5
	}
	return p
}

// wait is the pause before a restart that follows n exits in a row of
// children that did not run stably (0 after one that did).
func (p RestartPolicy) wait(n int) time.Duration {
	d := p.MinWait
	for range n {
		if d >= p.MaxWait {
			break
		}
		d *= 2
	}
	return min(d, p.MaxWait)
}

// supervise waits for child c to exit and, under the restart policy,
// starts another in its place, until Stop or until it gives up; then it
// closes Done.
func (s *Server) supervise(c *child) {
	defer close(s.done)
	unstable := 0  // exits in a row of children that did not run Stable
	immediate := 0 // exits in a row of children that never answered
	for {
		<-c.exited
		err := s.exitErr(c)
		if s.stopped() || !s.restart.Enabled {
			s.err = err
			return
		}
		if err == nil {
			err = errors.New("redis-server exited")
		}
		ready := s.readyAt(c)
		if ready.IsZero() {
			immediate++
		} else {
			immediate = 0
		}
		if ready.IsZero() || time.Since(ready) < s.restart.Stable {
			unstable++
		} else {
			unstable = 0
		}
		if immediate >= s.restart.GiveUpAfter {
			s.err = fmt.Errorf("gave up restarting it after %d failures in a row before it answered: %w", immediate, err)
			s.logger.Error("benchq: redis-server child keeps failing before it answers; not restarting it again", "failures", immediate, "err", err)
			return
		}
		wait := s.restart.wait(max(unstable-1, 0))
		s.logger.Warn("benchq: redis-server child exited; restarting it", "pid", c.pid(), "in", wait, "err", err)
		if !s.pause(wait) {
			return // stopped while waiting: nothing runs
		}
		next, err := s.restartChild()
		if errors.Is(err, errStopped) {
			return
		}
		if err != nil {
			// Counted as an immediate failure by the next round.
			s.logger.Warn("benchq: redis-server child did not come back", "err", err)
		}
		c = next
	}
}

// restartChild starts a child and waits until it answers. A child that
// does not is killed; it is returned all the same (exited), so the
// caller counts it as an immediate failure.
func (s *Server) restartChild() (*child, error) {
	c, err := s.spawn()
	if err != nil {
		if errors.Is(err, errStopped) {
			return nil, err
		}
		// Never ran: a child already exited, with the reason.
		c = &child{exited: make(chan struct{}), waitErr: err}
		close(c.exited)
		return c, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := s.waitReady(ctx, c, s.limit); err != nil {
		_ = c.cmd.Process.Kill()
		<-c.exited
		return c, err
	}
	s.markReady(c)
	s.logger.Info("benchq: redis-server child restarted", "pid", c.pid(), "socket", s.socket)
	return c, nil
}

// markReady records that child c answers now.
func (s *Server) markReady(c *child) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.readyAt = time.Now()
}

// readyAt is when child c first answered; zero if it never did.
func (s *Server) readyAt(c *child) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.readyAt
}

// pid is the child's process id; 0 for one that never started.
func (c *child) pid() int {
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// stopped reports whether Stop has begun.
func (s *Server) stopped() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// pause waits d, or until Stop begins (then it returns false).
func (s *Server) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.stopping:
		return false
	}
}
