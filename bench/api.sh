#!/usr/bin/env bash
# api.sh: latency of POST /v1/jobs under 200 concurrent clients.
#
# Starts a real redis-server and `benchq serve` (API only, no worker, so
# the submitted jobs just queue up) pinned to CPU 0, then runs
# `benchq ab -l -p job.json -T application/json -c 200 -n 20000` against
# POST /v1/jobs pinned to CPU 1 and prints ab's report: requests per
# second and the percentile block (50% and 99% are the figures to quote).
# The job is a valid one-request job on the service's own /healthz; -l
# because each 202 body names its own job, so lengths vary. Last, the CPU
# time benchq serve and redis-server spent per request.
#
# The default is ab's closed model at saturation, where latency is just
# concurrency / throughput. --rate R switches to the open model (R POSTs a
# second, latency from each intended start) to see latency below it.
#
# It fails unless every POST answered 202 (no failed requests, no non-2xx
# responses) and the jobs queue in Redis holds one task per POST.
#
# Only 127.0.0.1 is used; the run is bounded by -n and a timeout.
# About 20 s on a 2-core machine.
#
# Usage: bench/api.sh [--requests N] [--concurrency C] [--keepalive]
#                     [--rate R] [--port P] [--redis-port P]
set -euo pipefail

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; }

requests=20000
concurrency=200
keepalive=""
rate=""
port=18580
redis_port=18579
warmup=1000
while [ $# -gt 0 ]; do
	case "$1" in
	--requests) requests=$2; shift ;;
	--concurrency) concurrency=$2; shift ;;
	--keepalive) keepalive="-k" ;;
	--rate) rate=$2; shift ;;
	--port) port=$2; shift ;;
	--redis-port) redis_port=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "api.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need redis-server redis-server
tools_need redis-cli redis-tools
tools_need taskset util-linux
tools_need curl curl
tools_install api.sh
command -v go >/dev/null || { echo "api.sh: go is needed to build benchq" >&2; exit 1; }
tools_pin api.sh "server and client"

benchq_build
benchq_redis "$redis_port" "$server_cpu" || exit 1

base="http://127.0.0.1:$port"
# serve needs an API key and refuses loopback targets unless allowlisted.
# The key's quotas are lifted: this measures the cost of a POST, auth and
# quota checks included, not the limiter saying no. No worker runs, so
# every job stays queued and counts against max-active-jobs.
key=$(benchq_key "$redis_url" api-bench --max-active-jobs 100000000 --submissions-per-minute 100000000) || exit 1
benchq_start serve.log "$server_cpu" BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.0/8 \
	serve --addr "127.0.0.1:$port"
serve_pid=$benchq_pid
benchq_ready "$base" serve.log || exit 1

cat >"$work/job.json" <<EOF
{"name": "api-bench", "targets": [{"url": "$base/healthz"}], "sweep": {"requests": [1]}}
EOF
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary @"$work/job.json" "$base/v1/jobs")
[ "$code" = 202 ] || { echo "api.sh: POST /v1/jobs answered $code, want 202" >&2; exit 1; }

flags=(-l -p "$work/job.json" -T application/json -H "Authorization: Bearer $key" -c "$concurrency")
[ -n "$keepalive" ] && flags+=(-k)
ab() { # requests; the report goes to stdout
	taskset -c "$client_cpu" timeout 300 "$work/benchq" ab "${flags[@]}" -n "$1" "$base/v1/jobs"
}
# cpu_seconds PID: user + system CPU time the process has used so far.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }

echo "api.sh: warm-up, $warmup requests" >&2
ab "$warmup" >/dev/null
[ -n "$rate" ] && flags+=(--rate "$rate")
# The key stays out of the output.
echo "api.sh: benchq ab ${flags[*]/"$key"/KEY} -n $requests $base/v1/jobs" >&2
redis_cpu0=$(cpu_seconds "$redis_pid") serve_cpu0=$(cpu_seconds "$serve_pid")
ab "$requests" | tee "$work/report.txt"
redis_cpu1=$(cpu_seconds "$redis_pid") serve_cpu1=$(cpu_seconds "$serve_pid")

status=0
failed=$(awk '/^Failed requests:/ {print $3}' "$work/report.txt")
non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$work/report.txt")
complete=$(awk '/^Complete requests:/ {print $3}' "$work/report.txt")
if [ "$complete" != "$requests" ] || [ "${failed:-0}" != 0 ] || [ "${non2xx:-0}" != 0 ]; then
	echo "api.sh: FAIL: complete $complete of $requests, failed ${failed:-0}, non-2xx ${non2xx:-0}" >&2
	status=1
fi
# One asynq task per accepted POST: the first, the warm-up and the run.
want=$((1 + warmup + requests))
pending=$(redis-cli -p "$redis_port" llen 'asynq:{jobs}:pending')
if [ "$pending" != "$want" ]; then
	echo "api.sh: FAIL: $pending tasks pending in the jobs queue, want $want" >&2
	status=1
fi

rps=$(awk '/^Requests per second:/ {print $4}' "$work/report.txt")
p50=$(awk '$1 == "50%" {print $2}' "$work/report.txt")
p99=$(awk '$1 == "99%" {print $2}' "$work/report.txt")
printf '\napi.sh: POST /v1/jobs, c=%s n=%s%s%s: %s req/s, p50 %s ms, p99 %s ms, %s jobs queued\n' \
	"$concurrency" "$requests" "${keepalive:+ keep-alive}" "${rate:+ rate $rate/s}" "$rps" "$p50" "$p99" "$pending"
awk -v s0="$serve_cpu0" -v s1="$serve_cpu1" -v r0="$redis_cpu0" -v r1="$redis_cpu1" \
	-v n="$requests" -v cpu="$server_cpu" 'BEGIN {
	printf "api.sh: CPU per request: benchq serve %.0f us, redis-server %.0f us (%.1f s + %.1f s on CPU %s)\n",
		(s1 - s0) / n * 1e6, (r1 - r0) / n * 1e6, s1 - s0, r1 - r0, cpu }'
exit "$status"
