// Command streamhold holds event streams open against a benchq API for
// bench/streams.sh: n concurrent GET /v1/jobs/{id}/events on 127.0.0.1
// only, with the key in BENCHQ_API_KEY, each read and discarded until the
// server ends it or the program's lifetime (-for) ends. A stream the
// server ends is not reopened, so the count only falls.
//
// It prints "open N refused M" on stdout once every stream has its
// answer, then exits at -for or on SIGTERM.
//
//	BENCHQ_API_KEY=... go run ./bench/streamhold -server http://127.0.0.1:18580 -job ID -n 500 [-for 10m]
package main
