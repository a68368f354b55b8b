package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/job"
)

// Finished is the data of a job.EventFinished event.
type Finished struct {
	Status   job.Status `json:"status"`
	Verdict  string     `json:"verdict,omitempty"`
	Error    string     `json:"error,omitempty"`
	RunsDone int        `json:"runs_done"`
}

// Event is one entry of a job's event stream. ID is the Redis stream ID,
// which orders events and serves as the SSE event id to resume from.
type Event struct {
	ID   string          `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	Time time.Time       `json:"time"`
}

// maxEvents caps each job's stream (approximately, which Redis trims
// cheaply): a long sweep writes progress events 4 times a second, and a
// client resuming from the start needs the recent ones and the end.
const maxEvents = 5000

// ReadBatch is the most events one ReadEvents returns: a caller that got
// that many should read on before it waits.
const ReadBatch = 200

// AppendEvent adds an event of type typ with data (encoded as JSON) to job
// jobID's stream, and announces it to WatchEvents.
func (s *Store) AppendEvent(ctx context.Context, jobID string, typ string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("store: append %s event to job %s: encode: %w", typ, jobID, err)
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{
			Stream: eventsKey(jobID),
			MaxLen: maxEvents,
			Approx: true,
			Values: []any{"type", typ, "data", raw, "time", s.now().UTC().Format(time.RFC3339Nano)},
		})
		s.touchJob(ctx, p, jobID)
		// After the XADD: a stream woken by the notice reads the event.
		p.Publish(ctx, eventsChannel(), jobID)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: append %s event to job %s: %w", typ, jobID, err)
	}
	return nil
}

// ReadEvents returns the events of job jobID after the one with ID after
// ("" or "0": from the start), oldest first. With none there yet, it waits
// up to block for one (block <= 0: it does not wait) and returns an empty
// slice if none came. The wait is not cut short by ctx, so SSE handlers
// should pass a block of a few seconds at most.
func (s *Store) ReadEvents(ctx context.Context, jobID string, after string, block time.Duration) ([]Event, error) {
	if after == "" {
		after = "0"
	}
	if !validStreamID(after) {
		return nil, fmt.Errorf("store: read events of job %s: %w: %q", jobID, ErrInvalidCursor, after)
	}
	args := &redis.XReadArgs{Streams: []string{eventsKey(jobID), after}, Count: ReadBatch, Block: -1}
	if block > 0 {
		args.Block = max(block, time.Millisecond) // go-redis: 0 would block forever
	}
	streams, err := s.rdb.XRead(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return []Event{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: read events of job %s: %w", jobID, err)
	}
	var events []Event
	for _, st := range streams {
		for _, m := range st.Messages {
			events = append(events, decodeEvent(m))
		}
	}
	return events, nil
}

// decodeEvent reads a stream entry. Entries are written only by
// AppendEvent; a field that does not parse is left zero rather than
// failing a whole stream.
func decodeEvent(m redis.XMessage) Event {
	ev := Event{ID: m.ID}
	ev.Type, _ = m.Values["type"].(string)
	if data, ok := m.Values["data"].(string); ok {
		ev.Data = json.RawMessage(data)
	}
	if ts, ok := m.Values["time"].(string); ok {
		ev.Time, _ = time.Parse(time.RFC3339Nano, ts)
	}
	return ev
}

// validStreamID reports whether id has the form of a Redis stream ID
// ("1700000000000-0", or the milliseconds alone).
func validStreamID(id string) bool {
	ms, seq, hasSeq := strings.Cut(id, "-")
	if _, err := strconv.ParseUint(ms, 10, 64); err != nil {
		return false
	}
	if hasSeq {
		if _, err := strconv.ParseUint(seq, 10, 64); err != nil {
			return false
		}
	}
	return true
}
