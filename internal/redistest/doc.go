// Package redistest starts a real redis-server on a free loopback port for
// integration tests of the store, the queue and the worker, and tears it
// down when the test ends. Tests that need Redis call Start; when no
// redis-server binary is installed they are skipped with a message saying
// how to install it, except under CI (CI=true), where a missing server is a
// failure, so a green CI run always means the integration tests ran.
//
// A Server can be put in trouble the way production Redis gets there:
// Kill (a crash), Restart on the same port, Pause and Resume (a hung
// server that keeps its data), RunOutOfMemory and RecoverMemory (a full
// Redis under noeviction).
//
// StartCluster starts a Redis Cluster of masters and StartSentinel a
// master, a replica and a sentinel watching them, for the tests that show
// benchq works on both; they need redis-cli too (package redis-tools).
package redistest
