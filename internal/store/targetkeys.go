package store

// Target leases (targetlease.go). Every key shares the hash tag
// {targets}, so one script can take all of a job's hosts at once on Redis
// Cluster too.
//
//	benchq:{targets}:lease:<host:port>   string the ID of the exclusive job holding the host; TTL one job lease
//	benchq:{targets}:shared:<host:port>  zset   jobs sharing the host ("exclusive": false), score = lease expiry (Redis TIME, ms)
//	benchq:{targets}:queue:<host:port>   zset   jobs waiting for the host, score = the job's creation unix ms
//	benchq:{targets}:seen:<host:port>    zset   the same jobs, score = when each last asked (Redis TIME, ms)
//
// The two zsets get a TTL of the staleness bound on every ask, so they
// vanish once nobody waits.
const targetsTag = prefix + "{targets}:"

func targetLeaseKey(host string) string  { return targetsTag + "lease:" + host }
func targetSharedKey(host string) string { return targetsTag + "shared:" + host }
func targetQueueKey(host string) string  { return targetsTag + "queue:" + host }
func targetSeenKey(host string) string   { return targetsTag + "seen:" + host }
