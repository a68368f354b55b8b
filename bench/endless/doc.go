// Command endless is a target for bench/membound.sh that never finishes a
// response: on 127.0.0.1 only, every request gets a 200 with a chunked body
// of zeros that goes on until the client hangs up, the per-response bound
// (-bound) is reached, or the program's lifetime (-for) ends. It holds
// one 64 KiB buffer, so its own memory stays flat whatever it sends; the
// load generator's is what the script measures.
//
// It prints its address ("127.0.0.1:PORT") on stdout once it listens.
//
//	go run ./bench/endless [-for 10m] [-bound 64GiB in bytes]
package main
