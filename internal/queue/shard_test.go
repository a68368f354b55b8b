package queue

import (
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

func TestShardPayloadRoundTrip(t *testing.T) {
	want := ShardPayload{JobID: "j1", Point: 2, Repeat: 1, Round: "2-1-ab12", Shard: 2, Shards: 3}
	task, err := NewShardTask(want, time.Minute)
	if err != nil {
		t.Fatalf("NewShardTask = %v", err)
	}
	got, err := ParseShard(task)
	if err != nil || got != want {
		t.Fatalf("ParseShard = %+v, %v; want %+v", got, err, want)
	}
}

func TestShardPayloadRefused(t *testing.T) {
	tests := []struct {
		name, typ, payload string
	}{
		{"wrong type", TypeJobRun, `{"job_id":"j","round":"r","shard":1,"shards":2}`},
		{"not json", TypeJobShard, `shard=1`},
		{"no round", TypeJobShard, `{"job_id":"j","shard":1,"shards":2}`},
		{"shard 0 is the coordinator's", TypeJobShard, `{"job_id":"j","round":"r","shard":0,"shards":2}`},
		{"shard past the count", TypeJobShard, `{"job_id":"j","round":"r","shard":2,"shards":2}`},
		{"unknown field", TypeJobShard, `{"job_id":"j","round":"r","shard":1,"shards":2,"x":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseShard(asynq.NewTask(tt.typ, []byte(tt.payload))); !errors.Is(err, ErrBadPayload) {
				t.Errorf("ParseShard = %v, want ErrBadPayload", err)
			}
		})
	}
	if _, err := NewShardTask(ShardPayload{JobID: "j", Round: "r", Shard: 0, Shards: 2}, time.Minute); !errors.Is(err, ErrBadPayload) {
		t.Errorf("NewShardTask(shard 0) = %v, want ErrBadPayload", err)
	}
}
