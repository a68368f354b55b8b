package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// Key layout. Every key benchq writes (besides asynq's own) is built here.
//
//	benchq:job:<id>                hash   "job" = job.Job as JSON, "owner" = API key id
//	benchq:job:<id>:progress       string job.Progress as JSON (written up to 4×/s, apart from the hash)
//	benchq:job:<id>:cancel         string "1" once a cancel was requested (the worker polls it)
//	benchq:job:<id>:runs           hash   "<point>:<repeat>" = job.Run as JSON (HSETNX: never twice)
//	benchq:job:<id>:events         stream fields type, data (JSON), time (RFC 3339); MAXLEN ~ maxEvents
//	benchq:jobs                    zset   every job, see indexMember
//	benchq:jobs:status:<status>    zset   jobs in that status
//	benchq:jobs:owner:<owner>      zset   jobs of one API key ("" is the open dev mode's owner)
//
// The five job keys get the retention TTL on every write to any of them.
// The indexes get it on every CreateJob and UpdateJob, which every job's
// life ends with, so an index outlives every job it lists. Entries of
// expired jobs are removed lazily when a listing meets them, and entries
// far past the retention are trimmed at each CreateJob.
const prefix = "benchq:"

func jobKey(id string) string      { return prefix + "job:" + id }
func progressKey(id string) string { return jobKey(id) + ":progress" }
func cancelKey(id string) string   { return jobKey(id) + ":cancel" }
func runsKey(id string) string     { return jobKey(id) + ":runs" }
func eventsKey(id string) string   { return jobKey(id) + ":events" }

// jobKeys lists every key of one job, for the TTL refresh.
func jobKeys(id string) []string {
	return []string{jobKey(id), progressKey(id), cancelKey(id), runsKey(id), eventsKey(id)}
}

func allIndexKey() string                { return prefix + "jobs" }
func statusIndexKey(s job.Status) string { return prefix + "jobs:status:" + string(s) }
func ownerIndexKey(owner string) string  { return prefix + "jobs:owner:" + owner }
func runField(k job.RunKey) string       { return strconv.Itoa(k.Point) + ":" + strconv.Itoa(k.Repeat) }
func indexKeys(owner string, s job.Status) []string {
	return []string{allIndexKey(), ownerIndexKey(owner), statusIndexKey(s)}
}

// Fields of the job hash.
const (
	fieldJob   = "job"
	fieldOwner = "owner"
)

// statuses lists every status, for the per-status indexes.
func statuses() []job.Status {
	return []job.Status{job.StatusQueued, job.StatusRunning, job.StatusSucceeded, job.StatusFailed, job.StatusCanceled}
}

// Index entries all have score 0 and sort by their member,
// "<created unix ms, 16 digits>:<id>": ZREVRANGEBYLEX then pages newest
// first, ties broken by ID, and a cursor (the last member seen) stays valid
// however many jobs are created meanwhile, because new members sort above it.
const msDigits = 16

func indexMember(j *job.Job) string {
	return timePrefix(j.CreatedAt) + ":" + j.ID
}

// timePrefix is the member prefix of time t; members of jobs created
// before t sort below it.
func timePrefix(t time.Time) string {
	return fmt.Sprintf("%0*d", msDigits, max(t.UnixMilli(), 0))
}

// memberID returns the job ID of an index member.
func memberID(m string) string {
	_, id, _ := strings.Cut(m, ":")
	return id
}

// validMember reports whether m has the form indexMember builds.
func validMember(m string) bool {
	ts, id, ok := strings.Cut(m, ":")
	if !ok || len(ts) != msDigits || id == "" {
		return false
	}
	_, err := strconv.ParseUint(ts, 10, 64)
	return err == nil
}

// parseRunField reads a runs hash field back into its key.
func parseRunField(f string) (job.RunKey, error) {
	p, r, ok := strings.Cut(f, ":")
	point, err1 := strconv.Atoi(p)
	repeat, err2 := strconv.Atoi(r)
	if !ok || err1 != nil || err2 != nil {
		return job.RunKey{}, fmt.Errorf("store: bad run field %q", f)
	}
	return job.RunKey{Point: point, Repeat: repeat}, nil
}
