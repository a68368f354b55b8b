// Package localredis runs the all-in-one command's own redis-server: a child
// process that keeps its data in an append-only file (fsynced every second)
// in a data directory, so jobs, results and API keys survive a restart.
//
// The child listens on a unix socket inside the data directory and on no TCP
// port: no port can clash, nothing off the machine can reach it, and the
// socket's 0700 mode in a 0700 directory admits only the user running
// benchq, so it needs no password and protected mode never applies.
//
// One benchq owns a data directory at a time (an flock on benchq.lock that
// the kernel drops when the process dies, even by SIGKILL). On Linux the
// child gets SIGTERM when benchq dies (Pdeathsig); elsewhere a child left
// running by a killed benchq still answers on the socket, and the next
// Start shuts it down (flushing its file) before starting its own.
//
// With a RestartPolicy, a child that exits on its own is started again on
// the same directory and socket, with a growing wait, until children keep
// failing before they answer.
package localredis
