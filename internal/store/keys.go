package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchq/benchq/internal/job"
)

// Key layout. Every key benchq writes (besides asynq's own) is built here.
//
//	benchq:job:{<id>}                hash   "job" = job.Job as JSON, "owner" = API key id
//	benchq:job:{<id>}:progress       string job.Progress as JSON (written up to 4×/s, apart from the hash)
//	benchq:job:{<id>}:cancel         string "1" once a cancel was requested (the worker polls it)
//	benchq:job:{<id>}:runs           hash   "<point>:<repeat>" = job.Run as JSON (HSETNX: never twice)
//	benchq:job:{<id>}:events         stream fields type, data (JSON), time (RFC 3339); MAXLEN ~ maxEvents
//	benchq:job:{<id>}:lease          string the holder of the attempt running the job; TTL seconds (lease.go)
//	benchq:{jobs}                    zset   every job, see indexMember
//	benchq:{jobs}:status:<status>    zset   jobs in that status
//	benchq:{jobs}:owner:<owner>      zset   jobs of one API key ("anonymous" is the open dev mode's owner)
//	benchq:{jobs}:owner:<owner>:status:<status>  zset  that key's jobs in that status
//	benchq:{jobs}:owner:<owner>:label:<k>=<v>    zset  that key's jobs labelled k=v (labels never change)
//	benchq:{jobs}:owner:<owner>:names            hash  index member of each of that key's jobs = its name in
//	                                                   lower case, so a name filter reads no job
//	benchq:changepoints:{<owner>/<template>}  hash  change point id = the point as JSON (changepoints.go),
//	                                                 at most MaxChangePoints, TTL the retention
//	benchq:changepoint:<id>          string the key of the hash above holding change point id
//	benchq:{jobs}:indexed            string "2" once every job stored before the two indexes above
//	                                        existed is in them (backfill.go)
//	benchq:forge:{<hash>}:comment    string the forge delivery writing one request's comment now
//	                                        (hash of forge, repository, request, context); TTL (forgelock.go)
//
// Hash tags (the part in braces) decide a key's Redis Cluster slot. Every
// key of one job carries the job's ID as its tag, so a WATCH, MULTI or
// script over one job's keys stays in one slot; a key added for a job must
// be built from jobKey. The indexes share the tag {jobs}, so one MULTI
// moves a job between status indexes. A job and its index entries are in
// different slots, so no transaction spans both: writers add a job's entry
// in the index of its new status before the job changes and remove the
// old one after, and readers skip entries that disagree with the job
// (index.go).
//
// The first five job keys get the retention TTL on every write to any of them.
// The indexes get it on every CreateJob and UpdateJob, which every job's
// life ends with, so an index outlives every job it lists. Entries of
// expired jobs are removed lazily when a listing meets them, and entries
// far past the retention are trimmed at each CreateJob.
const prefix = "benchq:"

// jobKey is job id's hash, and the stem of every other key of the job:
// the one place a job's hash tag is written.
func jobKey(id string) string      { return prefix + "job:{" + id + "}" }
func progressKey(id string) string { return jobKey(id) + ":progress" }
func cancelKey(id string) string   { return jobKey(id) + ":cancel" }
func runsKey(id string) string     { return jobKey(id) + ":runs" }
func eventsKey(id string) string   { return jobKey(id) + ":events" }
func leaseKey(id string) string    { return jobKey(id) + ":lease" }

// forgeCommentLockKey is the lock of one request comment on a forge;
// target names the comment (forge, repository, request and context),
// hashed so the key's length and characters do not depend on it.
func forgeCommentLockKey(target string) string {
	sum := sha256.Sum256([]byte(target))
	return prefix + "forge:{" + hex.EncodeToString(sum[:12]) + "}:comment"
}

// jobKeys lists the keys of one job that the TTL refresh keeps; a lease
// has its own short TTL.
func jobKeys(id string) []string {
	return []string{jobKey(id), progressKey(id), cancelKey(id), runsKey(id), eventsKey(id)}
}

// changePointsKey is the change points of owner's template; the tag keeps
// the record in one slot. Template names hold no '}' (template.ValidName).
func changePointsKey(owner, template string) string {
	return prefix + "changepoints:{" + owner + "/" + template + "}"
}
func changePointIDKey(id string) string { return prefix + "changepoint:" + id }

// indexTag is the hash tag every job index shares.
const indexTag = prefix + "{jobs}"

func allIndexKey() string                { return indexTag }
func statusIndexKey(s job.Status) string { return indexTag + ":status:" + string(s) }
func ownerIndexKey(owner string) string  { return indexTag + ":owner:" + owner }
func runField(k job.RunKey) string       { return strconv.Itoa(k.Point) + ":" + strconv.Itoa(k.Repeat) }
func ownerStatusIndexKey(owner string, s job.Status) string {
	return ownerIndexKey(owner) + ":status:" + string(s)
}

// ownerLabelIndexKey is the index of owner's jobs labelled k=v. Label
// names hold no '=' (job.Spec.Validate), so the key is unambiguous.
func ownerLabelIndexKey(owner, k, v string) string {
	return ownerIndexKey(owner) + ":label:" + k + "=" + v
}

func ownerNamesKey(owner string) string { return ownerIndexKey(owner) + ":names" }

func indexVersionKey() string { return indexTag + ":indexed" }

// indexKeys are the indexes job j is listed in while in status s.
func indexKeys(j *job.Job, s job.Status) []string {
	keys := []string{allIndexKey(), ownerIndexKey(j.Owner), statusIndexKey(s), ownerStatusIndexKey(j.Owner, s)}
	return append(keys, labelIndexKeys(j)...)
}

// statusIndexKeys are the indexes of job j that depend on its status s.
func statusIndexKeys(j *job.Job, s job.Status) []string {
	return []string{statusIndexKey(s), ownerStatusIndexKey(j.Owner, s)}
}

// labelIndexKeys are the indexes of job j's labels.
func labelIndexKeys(j *job.Job) []string {
	keys := make([]string, 0, len(j.Spec.Labels))
	for k, v := range j.Spec.Labels {
		keys = append(keys, ownerLabelIndexKey(j.Owner, k, v))
	}
	return keys
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

// Shard rounds (shards.go): one try at one sharded run. <round> is unique
// per try (the worker names it after the run and a random part).
//
//	benchq:job:{<id>}:shards:<round>:state      hash   "start" = agreed start, unix µs on Redis's clock; "abort" = why it was given up
//	benchq:job:{<id>}:shards:<round>:joined     hash   "<shard>" = the worker process that joined
//	benchq:job:{<id>}:shards:<round>:results    hash   "<shard>" = the shard's worker and its part as a job.Run (with its measurement)
//	benchq:job:{<id>}:shards:<round>:lease:<n>  string the holder of shard n; TTL the job lease, renewed while it runs
//
// TTL: a bound of the run, given by the coordinator on every write; the
// coordinator deletes the first three once the run is stored or given up.
func shardRoundKey(id, round string) string   { return jobKey(id) + ":shards:" + round }
func shardStateKey(id, round string) string   { return shardRoundKey(id, round) + ":state" }
func shardJoinedKey(id, round string) string  { return shardRoundKey(id, round) + ":joined" }
func shardResultsKey(id, round string) string { return shardRoundKey(id, round) + ":results" }
func shardLeaseKey(id, round string, shard int) string {
	return shardRoundKey(id, round) + ":lease:" + strconv.Itoa(shard)
}

// API keys and quotas.
//
//	benchq:{apikeys}:key:<id>             string apikey.Key as JSON (the hash, never the plaintext); no TTL
//	benchq:{apikeys}:hash:<sha256 hex>    string key id: the lookup index of a presented key
//	benchq:{apikeys}                      set    every key id, revoked ones included
//	benchq:{apikeys}:active               set    ids of keys not revoked (ActiveKeyCount)
//	benchq:quota:active:<owner>           zset   the owner's queued + running job ids, score = admission unix ms
//	benchq:quota:pins:<owner>             set    the owner's pinned job ids (PinJobWithin)
//	rate:benchq:quota:submissions:<owner> string redis_rate's GCRA state; redis_rate adds the "rate:" itself
//
// The API keys share one hash tag: AddKey and RevokeKey change a record
// and its indexes in one transaction, and keys are few and rarely
// written, so one slot holds them all. A quota key is used alone.
const apiKeysTag = prefix + "{apikeys}"

func apiKeyKey(id string) string         { return apiKeysTag + ":key:" + id }
func apiKeyHashKey(hash string) string   { return apiKeysTag + ":hash:" + hash }
func apiKeysKey() string                 { return apiKeysTag }
func activeAPIKeysKey() string           { return apiKeysTag + ":active" }
func activeJobsKey(owner string) string  { return prefix + "quota:active:" + owner }
func pinnedJobsKey(owner string) string  { return prefix + "quota:pins:" + owner }
func submissionsKey(owner string) string { return prefix + "quota:submissions:" + owner }

// Webhook deliveries.
//
//	benchq:job:{<id>}:webhook_secret           string the signing secret ("whsec_..."), kept out of the job JSON
//	benchq:job:{<id>}:deliveries               list   webhook.Delivery as JSON; delivery n is at index n-1,
//	                                                  at most one per event (CreateDelivery's script)
//	benchq:job:{<id>}:delivery:<n>:attempts    list   webhook.Attempt as JSON, in attempt order
//
// They get the retention TTL on every write to any of them, and the secret
// is refreshed whenever a delivery of its job is written, so it lives as
// long as the deliveries that need it.
func webhookSecretKey(id string) string { return jobKey(id) + ":webhook_secret" }
func deliveriesKey(id string) string    { return jobKey(id) + ":deliveries" }
func attemptsKey(id string, n int) string {
	return jobKey(id) + ":delivery:" + strconv.Itoa(n) + ":attempts"
}

// Target verification.
//
//	benchq:targets:owner:<owner>   hash   "<host>:<port>" = TargetHost as JSON ("anonymous" is the open dev mode's)
//
// TTL: the retention, renewed by every check, so a key's tokens stay the
// same while its hosts are in use and an abandoned key's list (which
// could name thousands of hosts) goes away.
func targetHostsKey(owner string) string { return prefix + "targets:owner:" + owner }

// Readiness.
//
//	benchq:probe   string "1", written by each readiness probe (TTL probeTTL)
func probeKey() string { return prefix + "probe" }

// The pub/sub channel of event notices (eventwatch.go). A channel is no
// key: it has no slot, and every node of a Cluster relays a PUBLISH to
// its subscribers, whichever node they are connected to.
//
//	benchq:events:notify   message: the id of a job whose stream got an event (AppendEvent)
func eventsChannel() string { return prefix + "events:notify" }

// Idempotency keys and compare_to selection.
//
//	benchq:idempotency:<sha256 hex of owner and key>  string "pending <body sha256> <token>" while the
//	                                                  first request creates its job (TTL idempotencyClaimTTL),
//	                                                  then "done <body sha256> <job id>" (TTL IdempotencyTTL)
//
// The key is hashed so any header value (and any owner id) makes a short,
// unambiguous Redis key. compare_to selection reads the owner index above.
func idempotencyKey(owner, key string) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(len(owner)) + ":" + owner + key))
	return prefix + "idempotency:" + hex.EncodeToString(sum[:])
}

// Job templates.
//
//	benchq:template:{<owner>/<name>}   hash   "template" = template.Template as JSON (its trigger secrets
//	                                          included: the API redacts them), "owner" = API key id; no TTL
//	benchq:template:{<owner>/<name>}:* reserved for other keys of the template (its schedule's state)
//	benchq:{templates}                 set    "<owner>/<name>" of every template (the scheduler, the hooks)
//	benchq:{templates}:owner:<owner>   set    names of one owner's templates
//
// Every key of one template carries "<owner>/<name>" as its tag; a key
// added for a template must be built from TemplateKey. Owners are key
// ids or "anonymous" and names never hold '/' (template.ValidName), so
// the ref is unambiguous. As with jobs, the indexes are another slot:
// PutTemplate lists before it writes, DeleteTemplate unlists after it
// deletes, and readers skip entries whose template is gone.
func templateRef(owner, name string) string { return owner + "/" + name }

// TemplateKey is the hash of template name of owner, and the stem (and
// hash tag) of every other key of that template.
func TemplateKey(owner, name string) string {
	return prefix + "template:{" + templateRef(owner, name) + "}"
}

const templatesTag = prefix + "{templates}"

func allTemplatesKey() string               { return templatesTag }
func ownerTemplatesKey(owner string) string { return templatesTag + ":owner:" + owner }

// What an owner's templates hold, for its limits, and which templates a
// CI delivery may concern (templatequota.go), under the indexes' tag so
// one script checks and changes them all.
//
//	benchq:{templates}:usage:<owner>   hash   name = "<bytes> <1 if scheduled, else 0> <github repository or -> <gitlab project or -> <token> <unix ms>"
//	benchq:{templates}:repos           zset   "<provider> <repository, lower case> <owner>/<name>", score 0:
//	                                          the templates a trigger binds to each repository
//	benchq:{templates}:accounted       string "1" once every template stored before the usage existed was accounted
//
// No TTL: they live as long as the templates.
func templateUsageKey(owner string) string { return templatesTag + ":usage:" + owner }
func templateReposKey() string             { return templatesTag + ":repos" }
func templatesAccountedKey() string        { return templatesTag + ":accounted" }

// Fields of the template hash.
const fieldTemplate = "template"

// Schedule state (internal/schedule), under the template's tag.
//
//	benchq:template:{<owner>/<name>}:schedule        hash  "tick" = the newest tick claimed, unix ms (a scheduler
//	                                                        fires a tick only after moving it past the stored one),
//	                                                        "job" = the id of the last job a tick created
//	benchq:template:{<owner>/<name>}:schedule:runs   list  ScheduledRun as JSON, newest first, at most MaxScheduledRuns
//
// No TTL: the state lives as long as the template. DeleteTemplate removes it.
func scheduleKey(owner, name string) string     { return TemplateKey(owner, name) + ":schedule" }
func scheduleRunsKey(owner, name string) string { return scheduleKey(owner, name) + ":runs" }

// Fields of the schedule hash.
const (
	fieldTick    = "tick"
	fieldLastJob = "job"
)

// Jobs kept past the retention (keep.go).
//
//	benchq:job:{<id>}:keep                            set    why the job is kept: "pin", "latest"; no TTL
//	benchq:{jobs}:kept                                set    index members of kept jobs; no TTL
//	benchq:template:{<owner>/<template>}:latest:<branch>  string id of the template's latest succeeded job
//	                                                  on that branch (its "branch" label; "" without one)
//
// While a job's keep set has a member, every refresh of its keys'
// TTL (touchJob) PERSISTs them instead, and the indexes spare its
// entries and do not expire.
func keepKey(id string) string { return jobKey(id) + ":keep" }
func keptIndexKey() string     { return indexTag + ":kept" }
func latestKey(owner, template, branch string) string {
	return TemplateKey(owner, template) + ":latest:" + branch
}
