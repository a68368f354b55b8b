#!/usr/bin/env bash
# streams.sh: what open event streams cost the API's other tenants.
#
# Starts a real redis-server, `benchq serve` and one worker, pinned to
# CPU 0. One key (the streamer) has a light job running (20 req/s against
# the API's own /healthz), so progress events flow; it holds 0, then 100,
# then 500 event streams of that job open (bench/streamhold, CPU 1). With
# each count, a second key (the bystander) GETs its own job at a fixed
# rate with `benchq ab -k --rate R` (open model, latency from each
# intended start, CPU 1), and the script prints the bystander's p50 and
# p99 (from ab -e's percentile CSV, in ms with 3 decimals) and their
# ratio to the first run with no stream open (repeat 0 at the end of
# --streams to see how much of the ratio is the machine's own noise).
#
# It fails if a stream is refused (the caps are raised to fit 500 from
# one key), if a GET fails or answers other than 200, or if /readyz is
# not 200 while the streams are open.
#
# Only 127.0.0.1 is used; every run is bounded by -n, a timeout and the
# holder's lifetime. About 90 s on a 2-core machine, the build included.
#
# Usage: bench/streams.sh [--streams "0 100 500"] [--rate R] [--requests N]
#                         [--port P] [--redis-port P]
set -euo pipefail

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }

counts="0 100 500"
rate=200
requests=2000
port=18590
redis_port=18589
while [ $# -gt 0 ]; do
	case "$1" in
	--streams) counts=$2; shift ;;
	--rate) rate=$2; shift ;;
	--requests) requests=$2; shift ;;
	--port) port=$2; shift ;;
	--redis-port) redis_port=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "streams.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
case " $counts " in *" 0 "*) ;; *) echo "streams.sh: --streams must include 0, the baseline" >&2; exit 2 ;; esac

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need redis-server redis-server
tools_need redis-cli redis-tools
tools_need taskset util-linux
tools_need curl curl
tools_install streams.sh
command -v go >/dev/null || { echo "streams.sh: go is needed to build benchq" >&2; exit 1; }
tools_pin streams.sh "servers and clients"

benchq_build streamhold
benchq_redis "$redis_port" "$server_cpu" || exit 1

export BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.0/8
base="http://127.0.0.1:$port"
streamer=$(benchq_key "$redis_url" streamer) || exit 1
bystander=$(benchq_key "$redis_url" bystander) || exit 1
# The caps are raised so the largest count fits one key: this measures
# what open streams cost, not the cap refusing them.
benchq_start serve.log "$server_cpu" BENCHQ_MAX_STREAMS_PER_KEY=1000 BENCHQ_MAX_STREAMS=2000 BENCHQ_LOG_LEVEL=warn \
	serve --addr "127.0.0.1:$port"
benchq_start worker.log "$server_cpu" BENCHQ_LOG_LEVEL=warn worker
benchq_ready "$base" serve.log || exit 1

submit() { # key spec: prints the job id
	local loc
	loc=$(benchq_submit "$base" "$2" -H "Authorization: Bearer $1") || return 1
	echo "${loc##*/}"
}
stream_job=$(submit "$streamer" '{"name":"streams-bench","targets":[{"url":"'"$base"'/healthz"}],"sweep":{"concurrency":[1],"rate":[20],"duration":["20m"]}}') || exit 1
own_job=$(submit "$bystander" '{"name":"bystander","targets":[{"url":"'"$base"'/healthz"}],"sweep":{"requests":[1]}}') || exit 1
for _ in $(seq 100); do
	curl -sf -H "Authorization: Bearer $streamer" "$base/v1/jobs/$stream_job" | grep -q '"status":"running"' && break
	sleep 0.1
done

# with_streams COUNT: hold COUNT streams, GET the bystander's job, print "COUNT p50 p99".
holder="" # the streamhold running now
with_streams() {
	local n=$1 csv="$work/pct-$1.csv" report="$work/report-$1.txt"
	if [ "$n" -gt 0 ]; then
		BENCHQ_API_KEY=$streamer taskset -c "$client_cpu" "$work/streamhold" -server "$base" -job "$stream_job" -n "$n" -for 5m \
			>"$work/hold-$n.txt" &
		holder=$!
		pids+=("$holder")
		for _ in $(seq 300); do
			[ -s "$work/hold-$n.txt" ] && break
			sleep 0.1
		done
		read -r _ opened _ refused <"$work/hold-$n.txt" || true
		if [ "${opened:-0}" != "$n" ] || [ "${refused:-1}" != 0 ]; then
			echo "streams.sh: FAIL: $n streams asked, ${opened:-0} open, ${refused:-?} refused" >&2
			exit 1
		fi
	fi
	echo "streams.sh: $n streams open; benchq ab -k --rate $rate -n $requests GET /v1/jobs/{id}" >&2
	local ready_fail=0
	(
		for _ in $(seq $((requests / rate * 4 + 4))); do
			code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$base/readyz")
			[ "$code" = 200 ] || echo "$code"
			sleep 0.25
		done
	) >"$work/readyz-$n.txt" &
	local prober=$!
	pids+=("$prober")
	taskset -c "$client_cpu" timeout 300 "$work/benchq" ab -q -k -c 20 --rate "$rate" -n "$requests" \
		-H "Authorization: Bearer $bystander" -e "$csv" "$base/v1/jobs/$own_job" >"$report"
	procs_stop "$prober"
	[ -s "$work/readyz-$n.txt" ] && { echo "streams.sh: FAIL: /readyz answered $(sort -u "$work/readyz-$n.txt" | tr '\n' ' ')with $n streams open" >&2; ready_fail=1; }
	local failed non2xx complete
	failed=$(awk '/^Failed requests:/ {print $3}' "$report")
	non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$report")
	complete=$(awk '/^Complete requests:/ {print $3}' "$report")
	if [ "$complete" != "$requests" ] || [ "${failed:-0}" != 0 ] || [ "${non2xx:-0}" != 0 ] || [ "$ready_fail" != 0 ]; then
		echo "streams.sh: FAIL with $n streams: complete $complete of $requests, failed ${failed:-0}, non-2xx ${non2xx:-0}" >&2
		exit 1
	fi
	[ -z "$holder" ] || procs_stop "$holder"
	holder=""
	echo "$n $(awk -F, '$1 == 50 {print $2}' "$csv") $(awk -F, '$1 == 99 {print $2}' "$csv")" >>"$work/results.txt"
	sleep 1 # the server lets the closed streams go
}

echo "streams.sh: warm-up, 500 GETs" >&2
taskset -c "$client_cpu" timeout 120 "$work/benchq" ab -q -k -c 20 -n 500 \
	-H "Authorization: Bearer $bystander" "$base/v1/jobs/$own_job" >/dev/null
for n in $counts; do
	with_streams "$n"
done

printf '\nstreams.sh: bystander GET /v1/jobs/{id}, %s req/s open model, n=%s, keep-alive\n' "$rate" "$requests"
awk 'NR == FNR { if ($1 == 0 && !base) { p50 = $2; p99 = $3; base = 1 }; next }
{
	printf "streams.sh: %4d streams open: p50 %7.3f ms, p99 %7.3f ms; vs none open: p50 x%.2f, p99 x%.2f\n",
		$1, $2, $3, (p50 > 0 ? $2 / p50 : 0), (p99 > 0 ? $3 / p99 : 0)
}' "$work/results.txt" "$work/results.txt"
