// Command arrivals is bench/pacing.sh's target: it times each request's
// arrival, so two load generators' pacing is measured the same way, from
// the target's side, whatever each says of itself.
//
//	arrivals serve -out FILE [-for 10m] [-max 5000000]
//
// answers every request on 127.0.0.1 with a 2-byte body and notes when its
// handler ran (ns on the monotonic clock, from the server's start); it
// prints its address ("127.0.0.1:PORT") once it listens, and on SIGTERM,
// SIGINT or the end of -for writes the arrivals to FILE, one a line, and
// exits. At most -max arrivals are kept (8 bytes each, allocated up front).
//
//	arrivals lag -rate R FILE
//
// compares FILE's arrivals with a schedule of R starts per second and
// prints "n p50_us p99_us max_us": the k-th arrival (in time order) is
// matched with the k-th start, k/R after the first, and its send-time error
// is how much later than its slot it arrived, counted from the
// best-timed arrival (the smallest arrival − slot is zero: the network's
// and the target's own delay, the same for every tool, drop out). A tool
// that sends early, or drifts off its rate, shows it as error.
package main
