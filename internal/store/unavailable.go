package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/redis/go-redis/v9"
)

// ErrUnavailable: Redis cannot serve the command now, for a reason that
// passes by itself or by an operator's hand (it is down, out of memory,
// read-only...), not because of the caller's input. Every error the store
// returns for such a failure wraps it, as an *UnavailableError naming the
// Condition; callers answer it with "retry later".
var ErrUnavailable = errcode.Sentinel(errcode.StoreUnavailable, "the data store is unavailable; retry after a while")

// Condition says why Redis is unavailable.
type Condition string

// Conditions of ErrUnavailable.
const (
	// Unreachable: no answer, refused connections, timeouts, closed
	// connections or client.
	Unreachable Condition = "unreachable"
	// RefusingWrites: Redis answers reads but refuses writes: out of
	// memory under noeviction (OOM), a read-only replica (READONLY),
	// failed persistence (MISCONF), too few replicas (NOREPLICAS), or a
	// transaction discarded because one of those refused a command in it
	// (EXECABORT: the store queues only well-formed commands).
	RefusingWrites Condition = "refusing writes"
	// NotReady: Redis answers but serves no commands yet: loading its
	// dataset (LOADING), running a long script (BUSY), its master or
	// cluster down (MASTERDOWN, CLUSTERDOWN, TRYAGAIN), or at its client
	// limit.
	NotReady Condition = "not ready"
	// CredentialsRefused: Redis refuses the service's own login or
	// permissions (NOAUTH, WRONGPASS, NOPERM). Not the client's fault and
	// not a bug: the service is misconfigured until an operator fixes its
	// Redis URL or ACL, and says so as an outage rather than a 500.
	CredentialsRefused Condition = "refusing the service's credentials"
)

// UnavailableError is a Redis failure classified as ErrUnavailable.
type UnavailableError struct {
	Condition Condition
	Err       error // what Redis or the network said
}

func (e *UnavailableError) Error() string {
	return "redis " + string(e.Condition) + ": " + e.Err.Error()
}

// Unwrap makes errors.Is find both ErrUnavailable and everything Err wraps.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// ConditionOf returns the condition of an error wrapping ErrUnavailable.
func ConditionOf(err error) (Condition, bool) {
	var ue *UnavailableError
	if errors.As(err, &ue) {
		return ue.Condition, true
	}
	return "", false
}

// Classify returns err wrapped in an *UnavailableError when it says
// Redis is unavailable, and err itself otherwise (nil, redis.Nil, a
// script's own error, an error already classified). It is the one place
// that decides what an outage is: the store applies it to every command
// (see classifyHook), the queue to asynq's errors.
//
// A bare context error is the caller's own deadline or hang-up, not
// Redis's: go-redis reports a Redis that does not answer as a network
// error (a dial or read timeout), so only those count.
func Classify(err error) error {
	if c, ok := classify(err); ok {
		return &UnavailableError{Condition: c, Err: err}
	}
	return err
}

func classify(err error) (Condition, bool) {
	if err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) {
		return "", false
	}
	for _, p := range replyPrefixes {
		if redis.HasErrorPrefix(err, p.prefix) {
			return p.cond, true
		}
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return Unreachable, true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "", false
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return Unreachable, true
	}
	for _, e := range connErrors {
		if errors.Is(err, e) {
			return Unreachable, true
		}
	}
	return "", false
}

// replyPrefixes are the error replies of a Redis that is unavailable, by
// their first word (redis.HasErrorPrefix matches any redis.Error).
var replyPrefixes = []struct {
	prefix string
	cond   Condition
}{
	{"OOM ", RefusingWrites},
	{"READONLY ", RefusingWrites},
	{"MISCONF ", RefusingWrites},
	{"NOREPLICAS ", RefusingWrites},
	{"EXECABORT ", RefusingWrites},
	{"LOADING ", NotReady},
	{"BUSY ", NotReady},
	{"MASTERDOWN ", NotReady},
	{"CLUSTERDOWN ", NotReady},
	{"TRYAGAIN ", NotReady},
	{"max number of clients reached", NotReady}, // HasErrorPrefix drops the "ERR "
	{"NOAUTH ", CredentialsRefused},
	{"WRONGPASS ", CredentialsRefused},
	{"NOPERM ", CredentialsRefused},
}

// connErrors end a connection without a *net.OpError around them.
var connErrors = []error{
	io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
	syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE,
	redis.ErrClosed, redis.ErrPoolTimeout, redis.ErrPoolExhausted,
}

// ClassifyText is Classify for an error that kept only the text of the
// Redis failure, without its chain: asynq flattens a script's error into
// "redis eval error: <reply>". It looks for the replies above and for the
// network failures' texts, so it is only for errors known to come from a
// Redis command.
func ClassifyText(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if c, ok := classify(err); ok {
		return &UnavailableError{Condition: c, Err: err}
	}
	msg := err.Error()
	for _, p := range replyPrefixes {
		if strings.Contains(msg, p.prefix) {
			return &UnavailableError{Condition: p.cond, Err: err}
		}
	}
	for _, s := range connTexts {
		if strings.Contains(msg, s) {
			return &UnavailableError{Condition: Unreachable, Err: err}
		}
	}
	return err
}

// connTexts are how the connErrors and network errors read.
var connTexts = []string{
	"connection refused", "connection reset", "broken pipe", "i/o timeout",
	"use of closed network connection", "no route to host", "network is unreachable",
	"redis: client is closed", "redis: connection pool timeout", "redis: connection pool exhausted",
	"unexpected EOF", ": EOF",
}

// classifyHook applies Classify to every command of a client, so no store
// method (nor any added later) can leak an unclassified outage. It
// replaces a command's error, not just the returned one: callers read
// cmd.Err() through Result().
type classifyHook struct{}

func (classifyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (classifyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if c, ok := classify(err); ok {
			err = &UnavailableError{Condition: c, Err: err}
			cmd.SetErr(err)
		}
		return err
	}
}

func (classifyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if c, ok := classify(cmd.Err()); ok {
				cmd.SetErr(&UnavailableError{Condition: c, Err: cmd.Err()})
			}
		}
		return Classify(err)
	}
}
