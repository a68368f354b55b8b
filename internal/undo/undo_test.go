package undo

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/logbuf"
	"github.com/benchq/benchq/internal/store"
)

var errOutage = &store.UnavailableError{Condition: store.Unreachable, Err: errors.New("connection refused")}

func TestUndoer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int           // attempts that fail with errOutage before one succeeds; -1 is all
		other    error         // the error of the first attempt instead, when set
		within   time.Duration // the undo's time
		close    bool          // the server closes while it waits
		calls    func(int) bool
		log      string
	}{
		{"succeeds at once", 0, nil, time.Minute, false, func(n int) bool { return n == 1 }, ""},
		{"waits for redis", 3, nil, time.Minute, false, func(n int) bool { return n == 4 }, "undone once redis answered"},
		{"other error is not retried", 0, errors.New("bug"), time.Minute, false, func(n int) bool { return n == 1 }, "undo failed"},
		{"abandoned when its time is up", -1, nil, 400 * time.Millisecond, false, func(n int) bool { return n >= 2 && n <= 5 }, "undo abandoned"},
		{"abandoned at shutdown", -1, nil, time.Minute, true, func(n int) bool { return n >= 1 }, "shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logbuf.Buffer
			closing, stop := context.WithCancel(context.Background())
			defer stop()
			u := New(closing, slog.New(slog.NewTextHandler(&logs, nil)))
			var calls atomic.Int32
			u.Run("thing", tc.within, func(context.Context) error {
				n := int(calls.Add(1))
				switch {
				case tc.other != nil:
					return tc.other
				case tc.failures < 0 || n <= tc.failures:
					return errOutage
				}
				return nil
			})
			if tc.close {
				time.Sleep(150 * time.Millisecond)
				stop()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := u.Wait(ctx); err != nil {
				t.Fatalf("wait = %v", err)
			}
			if n := int(calls.Load()); !tc.calls(n) {
				t.Errorf("%d attempts", n)
			}
			if tc.log != "" && !strings.Contains(logs.String(), tc.log) {
				t.Errorf("log %q lacks %q", logs.String(), tc.log)
			}
		})
	}
}
