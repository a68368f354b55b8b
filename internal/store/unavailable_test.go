package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/redistest"
	"github.com/benchq/benchq/internal/store"
)

// replyErr is an error reply as go-redis returns it: a redis.Error.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// timeoutErr is a net.Error timeout that is no *net.OpError.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name string
		err  error
		want store.Condition // "" means not unavailable
	}{
		{"nil", nil, ""},
		{"OOM", replyErr("OOM command not allowed when used memory > 'maxmemory'."), store.RefusingWrites},
		{"OOM in a script", replyErr("OOM command not allowed when used memory > 'maxmemory'. script: f52a, on @user_script:55."), store.RefusingWrites},
		{"READONLY", replyErr("READONLY You can't write against a read only replica."), store.RefusingWrites},
		{"MISCONF", replyErr("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk."), store.RefusingWrites},
		{"NOREPLICAS", replyErr("NOREPLICAS Not enough good replicas to write."), store.RefusingWrites},
		{"EXECABORT", replyErr("EXECABORT Transaction discarded because of previous errors."), store.RefusingWrites},
		{"wrapped OOM", fmt.Errorf("store: create job j1: %w", replyErr("OOM command not allowed")), store.RefusingWrites},
		{"LOADING", replyErr("LOADING Redis is loading the dataset in memory"), store.NotReady},
		{"BUSY", replyErr("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), store.NotReady},
		{"MASTERDOWN", replyErr("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), store.NotReady},
		{"CLUSTERDOWN", replyErr("CLUSTERDOWN The cluster is down"), store.NotReady},
		{"TRYAGAIN", replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), store.NotReady},
		{"max clients", replyErr("ERR max number of clients reached"), store.NotReady},
		{"NOAUTH", replyErr("NOAUTH Authentication required."), store.CredentialsRefused},
		{"WRONGPASS", replyErr("WRONGPASS invalid username-password pair or user is disabled."), store.CredentialsRefused},
		{"NOPERM", replyErr("NOPERM User benchq has no permissions to run the 'xadd' command"), store.CredentialsRefused},
		{"connection refused", refused, store.Unreachable},
		{"wrapped connection refused", fmt.Errorf("store: get job: %w", refused), store.Unreachable},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, store.Unreachable},
		{"dial timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, store.Unreachable},
		{"other timeout", timeoutErr{}, store.Unreachable},
		{"EOF", io.EOF, store.Unreachable},
		{"unexpected EOF", io.ErrUnexpectedEOF, store.Unreachable},
		{"reset", syscall.ECONNRESET, store.Unreachable},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), store.Unreachable},
		{"client closed", redis.ErrClosed, store.Unreachable},
		{"pool timeout", redis.ErrPoolTimeout, store.Unreachable},
		{"caller hung up", context.Canceled, ""},
		{"caller's deadline", fmt.Errorf("api: %w", context.DeadlineExceeded), ""},
		{"redis.Nil", redis.Nil, ""},
		{"lost optimistic round", redis.TxFailedErr, ""},
		{"wrong type", replyErr("WRONGTYPE Operation against a key holding the wrong kind of value"), ""},
		{"syntax", replyErr("ERR wrong number of arguments for 'set' command"), ""},
		{"script bug", replyErr("ERR user_script:1: Script attempted to access nonexistent global variable"), ""},
		{"not found", store.ErrNotFound, ""},
		{"conflict", fmt.Errorf("x: %w", store.ErrConflict), ""},
		{"plain", errors.New("connection refused, says a comment"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := store.Classify(tc.err)
			cond, ok := store.ConditionOf(got)
			if tc.want == "" {
				if ok || errors.Is(got, store.ErrUnavailable) || got != tc.err {
					t.Fatalf("Classify(%v) = %v, want it unchanged", tc.err, got)
				}
				return
			}
			if !ok || cond != tc.want || !errors.Is(got, store.ErrUnavailable) {
				t.Fatalf("Classify(%v) = %v (condition %q), want ErrUnavailable %q", tc.err, got, cond, tc.want)
			}
			if !errors.Is(got, tc.err) || !strings.Contains(got.Error(), tc.err.Error()) {
				t.Errorf("Classify(%v) = %q lost the original error", tc.err, got)
			}
			if again := store.Classify(got); again != got {
				t.Errorf("Classify twice = %v, want the first classification", again)
			}
		})
	}
}

// TestClassifyText: asynq reports a script's Redis error as text only.
func TestClassifyText(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		want store.Condition
	}{
		{"UNKNOWN: redis eval error: OOM command not allowed when used memory > 'maxmemory'. script: 1f2e, on @user_script:7.", store.RefusingWrites},
		{"UNKNOWN: redis eval error: READONLY You can't write against a read only replica. script: 1f2e", store.RefusingWrites},
		{"UNKNOWN: redis eval error: MISCONF Redis is configured to save RDB snapshots", store.RefusingWrites},
		{"UNKNOWN: redis eval error: LOADING Redis is loading the dataset in memory", store.NotReady},
		{"UNKNOWN: redis eval error: dial tcp 127.0.0.1:6379: connect: connection refused", store.Unreachable},
		{"UNKNOWN: redis eval error: read tcp 127.0.0.1:50312->127.0.0.1:6379: i/o timeout", store.Unreachable},
		{"UNKNOWN: redis eval error: redis: client is closed", store.Unreachable},
		{"UNKNOWN: redis eval error: EOF", store.Unreachable},
		{"task ID conflicts with another task", ""},
		{"UNKNOWN: redis eval error: ERR user_script:3: attempt to compare nil with number", ""},
	} {
		got := store.ClassifyText(errors.New(tc.msg))
		cond, _ := store.ConditionOf(got)
		if cond != tc.want {
			t.Errorf("ClassifyText(%q) condition = %q, want %q", tc.msg, cond, tc.want)
		}
	}
	if got := store.ClassifyText(nil); got != nil {
		t.Errorf("ClassifyText(nil) = %v", got)
	}
}

// TestStoreErrorsClassified provokes each condition a redis-server can be
// put in from a test and checks that the store's writes, and the write
// probe, fail with ErrUnavailable and that condition, that reads still
// work where Redis serves them, and that the store recovers with Redis.
func TestStoreErrorsClassified(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := store.New(rdb, store.Options{Retention: testRetention})
	ctx := t.Context()
	stored := newJob(jobID(0), "key_a", 0, nil)
	mustCreate(t, s, stored)
	admin := srv.Client(t)
	// One connection kept for the password case: it stays logged in when
	// the password is set, so it can take it away again.
	sticky := admin.Conn()
	t.Cleanup(func() { sticky.Close() })
	for _, tc := range []struct {
		name      string
		cond      store.Condition
		readsWork bool
		emptied   bool // the condition lost the data
		enter     func(t testing.TB)
		leave     func(t testing.TB)
	}{
		{"out of memory", store.RefusingWrites, true, false, srv.RunOutOfMemory, srv.RecoverMemory},
		{"too few replicas", store.RefusingWrites, true, false,
			func(t testing.TB) { mustDo(t, admin, "CONFIG", "SET", "min-replicas-to-write", "1") },
			func(t testing.TB) { mustDo(t, admin, "CONFIG", "SET", "min-replicas-to-write", "0") }},
		{"read-only replica", store.RefusingWrites, true, false,
			// A master that never answers: the replica serves stale reads.
			func(t testing.TB) { mustDo(t, admin, "REPLICAOF", "127.0.0.1", "1") },
			func(t testing.TB) { mustDo(t, admin, "REPLICAOF", "NO", "ONE") }},
		{"password required", store.CredentialsRefused, false, false,
			func(t testing.TB) {
				if err := sticky.ConfigSet(t.Context(), "requirepass", "not-the-service-s").Err(); err != nil {
					t.Fatal(err)
				}
				// Connections logged in before stay so; the store's must reconnect.
				if err := sticky.Do(t.Context(), "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
					t.Fatal(err)
				}
			},
			func(t testing.TB) {
				if err := sticky.ConfigSet(t.Context(), "requirepass", "").Err(); err != nil {
					t.Fatal(err)
				}
			}},
		{"killed", store.Unreachable, false, true,
			func(testing.TB) { srv.Kill() },
			func(t testing.TB) { srv.Restart(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.enter(t)
			writes := map[string]error{
				"ProbeWrite":       s.ProbeWrite(ctx),
				"CreateJob":        s.CreateJob(ctx, newJob(jobID(1), "key_a", 1, nil)),
				"SetWebhookSecret": s.SetWebhookSecret(ctx, jobID(1), "whsec_x"),
				"UpdateJob": func() error {
					_, err := s.UpdateJob(ctx, stored.ID, func(j *job.Job) error { return j.Transition(job.StatusRunning, nowUTC()) })
					return err
				}(),
				"AllowSubmission": func() error { _, err := s.AllowSubmission(ctx, "key_a", 10); return err }(),
				"ReserveActive":   func() error { _, err := s.ReserveActive(ctx, "key_a", jobID(1), 10); return err }(),
				"ClaimIdempotencyKey": func() error {
					_, _, err := s.ClaimIdempotencyKey(ctx, "key_a", "k", "hash")
					return err
				}(),
			}
			for name, err := range writes {
				if cond, ok := store.ConditionOf(err); !ok || cond != tc.cond || !errors.Is(err, store.ErrUnavailable) {
					t.Errorf("%s = %v, want ErrUnavailable %q", name, err, tc.cond)
				}
			}
			_, err := s.GetJob(ctx, stored.ID)
			if tc.readsWork && err != nil {
				t.Errorf("GetJob while %s = %v, want the job (reads are served)", tc.name, err)
			}
			if cond, _ := store.ConditionOf(err); !tc.readsWork && cond != tc.cond {
				t.Errorf("GetJob while %s = %v, want ErrUnavailable %q", tc.name, err, tc.cond)
			}
			tc.leave(t)
			// No new client: the store's own reconnects.
			waitFor(t, func() error { return s.ProbeWrite(ctx) })
			if tc.emptied {
				mustCreate(t, s, stored)
			}
			if _, err := s.GetJob(ctx, stored.ID); err != nil {
				t.Errorf("GetJob after %s = %v, want the job", tc.name, err)
			}
		})
	}
}

func mustDo(t testing.TB, c *redis.Client, args ...any) {
	t.Helper()
	if err := c.Do(t.Context(), args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// waitFor retries fn for up to 10 s, for Redis to settle after a change.
func waitFor(t *testing.T, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after 10s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDiscardJob: a discard removes every key the creation wrote, works
// while Redis refuses writes, can be repeated, and leaves a job a worker
// took alone.
func TestDiscardJob(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := store.New(rdb, store.Options{Retention: testRetention})
	ctx := t.Context()
	create := func(id string) *job.Job {
		j := newJob(id, "key_a", 0, nil)
		if slot, err := s.ReserveActive(ctx, "key_a", id, 10); err != nil || !slot.Admitted {
			t.Fatalf("ReserveActive = %+v, %v", slot, err)
		}
		if err := s.SetWebhookSecret(ctx, id, "whsec_x"); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, s, j)
		return j
	}
	j := create(jobID(1))
	srv.RunOutOfMemory(t)
	for range 2 {
		if err := s.DiscardJob(ctx, j); err != nil {
			t.Fatalf("DiscardJob out of memory = %v, want nil", err)
		}
	}
	srv.RecoverMemory(t)
	if keys, err := rdb.Keys(ctx, "benchq:*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys after discard = %v, %v, want none", keys, err)
	}
	if jobs, _, err := s.ListJobs(ctx, store.ListFilter{Limit: 10}); err != nil || len(jobs) != 0 {
		t.Errorf("ListJobs after discard = %d jobs, %v, want none", len(jobs), err)
	}
	if n, err := s.ActiveJobs(ctx, "key_a"); err != nil || n != 0 {
		t.Errorf("active jobs after discard = %d, %v, want 0", n, err)
	}

	// A job that was never stored: its slot and secret go all the same.
	if _, err := s.ReserveActive(ctx, "key_a", jobID(2), 10); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardJob(ctx, newJob(jobID(2), "key_a", 0, nil)); err != nil {
		t.Fatalf("DiscardJob of an unstored job = %v", err)
	}
	if n, _ := s.ActiveJobs(ctx, "key_a"); n != 0 {
		t.Errorf("active jobs after discarding an unstored job = %d, want 0", n)
	}

	running := create(jobID(3))
	if _, err := s.UpdateJob(ctx, running.ID, func(j *job.Job) error { return j.Transition(job.StatusRunning, nowUTC()) }); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardJob(ctx, running); !errors.Is(err, store.ErrConflict) {
		t.Errorf("DiscardJob of a running job = %v, want ErrConflict", err)
	}
	if _, err := s.GetJob(ctx, running.ID); err != nil {
		t.Errorf("the running job after a refused discard: %v", err)
	}
}
