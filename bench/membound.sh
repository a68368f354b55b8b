#!/usr/bin/env bash
# membound.sh: is benchq's memory bounded whatever a target sends?
#
# nginx (bench/lib/servers.sh, one worker, pinned to CPU 0) serves a
# --size MiB sparse file on 127.0.0.1 with sendfile, so the server holds
# none of it. Pinned to CPU 1, one after the other:
#
#   ab           Debian's ab -n N -c C, for comparison
#   benchq ab    benchq ab -n N -c C, the CLI
#   all-in-one   the same as a one-point job on the all-in-one benchq (API,
#                worker and embedded Redis in one process), submitted with
#                curl and awaited until it ends
#
# Peak RSS is /usr/bin/time's maximum resident set size for the CLIs and
# the service's VmHWM (/proc/PID/status, the process's peak since it
# started) once the job has ended; VmRSS then, 5 s later, shows what it
# still holds. Then bench/endless (a chunked body that never ends) is
# loaded as a job with the default body cap and with `benchq ab --max-body`:
# every request must be cut and counted as body_too_large, memory still
# flat.
#
# Passes when benchq ab's peak RSS < 64 MiB, the all-in-one's < 128 MiB,
# every large body completed and every endless one was counted as
# body_too_large; exits 1 otherwise. Only 127.0.0.1 is ever loaded; every
# run is bounded by its request count and a timeout. About a minute.
#
# Usage: bench/membound.sh [--size MiB] [-n N] [-c C] [--job-timeout S]
set -euo pipefail

usage() {
	sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --size MiB         size of the served file (default 256)
  -n N               requests per run (default 8)
  -c C               concurrency (default 4)
  --job-timeout S    longest wait for one run or job (default 300)
EOF
}

size=256
requests=8
concurrency=4
job_timeout=300
while [ $# -gt 0 ]; do
	case "$1" in
	--size) size=$2; shift ;;
	-n) requests=$2; shift ;;
	-c) concurrency=$2; shift ;;
	--job-timeout) job_timeout=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "membound.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "membound.sh: $*" >&2; exit 1; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for v in "$size" "$requests" "$concurrency" "$job_timeout"; do
	is_count "$v" || die "not a positive whole number: $v"
done
[ "$concurrency" -le "$requests" ] || die "-c $concurrency exceeds -n $requests (ab refuses it)"

# --- tools -------------------------------------------------------------------

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need ab apache2-utils
tools_need /usr/sbin/nginx nginx
tools_need jq jq
tools_need curl curl
tools_need taskset util-linux
tools_need /usr/bin/time time
tools_install membound.sh
command -v go >/dev/null || die "go is needed to build benchq"

tools_pin membound.sh "servers and clients"

# --- processes ---------------------------------------------------------------

servers_init "$work"
mkdir -p "$work/www"
truncate -s "${size}M" "$work/www/big.bin" # sparse: no disk, no page cache to speak of
echo ok >"$work/www/ok.txt"
chmod -R a+rX "$work/www"
port=$(servers_free_port)
servers_start_nginx "$port" "$server_cpu" "$work/www" 'sendfile on; keepalive_requests 10000000;'
big="http://127.0.0.1:$port/big.bin"
servers_wait "http://127.0.0.1:$port/ok.txt" nginx || exit 1

benchq_build endless

taskset -c "$server_cpu" "$work/endless" -for "$((job_timeout * 3))s" >"$work/endless.addr" 2>"$work/endless.log" &
pids+=($!)
for _ in $(seq 50); do
	[ -s "$work/endless.addr" ] && break
	sleep 0.1
done
[ -s "$work/endless.addr" ] || { cat "$work/endless.log" >&2; die "bench/endless did not start"; }
endless="http://$(head -n 1 "$work/endless.addr")/"

aio_port=$(servers_free_port)
aio_base="http://127.0.0.1:$aio_port"
benchq_start aio.log "$client_cpu" BENCHQ_ADDR="127.0.0.1:$aio_port"
aio_pid=$benchq_pid
benchq_ready "$aio_base" aio.log || exit 1

# --- measurement -------------------------------------------------------------

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; } # KiB -> MiB
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; } # pid field

# run_cli NAME CMD...: measures a CLI (see measure in lib/procs.sh); sets
# rss (KiB) and leaves its report in $work/NAME.out.
measure_timeout=$job_timeout
run_cli() {
	measure "$@" || true
	cp "$work/out" "$work/$1.out"
	rss=$rss_kib
}

report_field() { awk -v l="$2" 'index($0, l) == 1 { sub(/^[^:]*: */, ""); print; exit }' "$1"; }

# run_job SPEC: submits SPEC to the all-in-one, waits for its end, and
# leaves the first run's result in $work/result.json.
run_job() {
	local loc
	loc=$(benchq_submit "$aio_base" "$1") || exit 1
	benchq_wait_job "$aio_base$loc" "$job_timeout" "$aio_pid" || exit 1
	benchq_results "$aio_base$loc" || exit 1
	jq '.runs[0].result' "$work/results.json" >"$work/result.json"
	[ "$(jq -r .complete_requests "$work/result.json")" != null ] || die "job $loc ($job_status) has no result"
}

fail=0
check() { # what value limit (value < limit, KiB or counts)
	if [ "$2" -lt "$3" ]; then
		echo "  ok    $1"
	else
		echo "  FAIL  $1"
		fail=1
	fi
}
check_eq() { # what got want
	if [ "$2" = "$3" ]; then
		echo "  ok    $1: $2"
	else
		echo "  FAIL  $1: $2, want $3"
		fail=1
	fi
}

n=$requests c=$concurrency
echo "membound.sh: ab -n $n -c $c ($size MiB bodies)" >&2
run_cli ab ab -n "$n" -c "$c" "$big"
ab_rss=$rss
ab_complete=$(report_field "$work/ab.out" "Complete requests")
ab_taken=$(report_field "$work/ab.out" "Time taken for tests")

echo "membound.sh: benchq ab -n $n -c $c" >&2
run_cli benchq "$work/benchq" ab -n "$n" -c "$c" "$big"
bq_rss=$rss
bq_complete=$(report_field "$work/benchq.out" "Complete requests")
bq_html=$(report_field "$work/benchq.out" "HTML transferred")
bq_taken=$(report_field "$work/benchq.out" "Time taken for tests")

echo "membound.sh: the same as a job on the all-in-one" >&2
aio_start=$(status_kib "$aio_pid" VmHWM)
run_job "$(jq -nc --arg u "$big" --argjson c "$c" --argjson n "$n" \
	'{name: "membound", targets: [{url: $u}], sweep: {concurrency: [$c], requests: [$n]}}')"
aio_hwm=$(status_kib "$aio_pid" VmHWM)
aio_rss=$(status_kib "$aio_pid" VmRSS)
job_complete=$(jq -r .complete_requests "$work/result.json")
job_html=$(jq -r .html_transferred_bytes "$work/result.json")
job_taken=$(jq -r .time_taken_s "$work/result.json")
sleep 5
aio_rss_later=$(status_kib "$aio_pid" VmRSS)

echo "membound.sh: endless chunked bodies: a job with the default cap, benchq ab --max-body 64 MiB" >&2
run_job "$(jq -nc --arg u "$endless" '{name: "membound-endless", targets: [{url: $u}],
	request: {keepalive: true}, sweep: {concurrency: [2], requests: [4]}}')"
endless_job=$(jq -c '{complete_requests, failed_requests, body_too_large: .failed.body_too_large,
	total_transferred_bytes}' "$work/result.json")
endless_cut=$(jq -r .failed.body_too_large "$work/result.json")
endless_hwm=$(status_kib "$aio_pid" VmHWM)
run_cli endless "$work/benchq" ab --json -k -n 4 -c 2 --max-body $((64 << 20)) "$endless"
endless_bq_rss=$rss
endless_bq_failed=$(jq -r .failed_requests "$work/endless.out")
endless_bq_classes=$(jq -c .failed "$work/endless.out")

echo
echo "Peak RSS, $n requests of $size MiB at c=$c (nginx, sendfile, 127.0.0.1):"
printf '  %-26s %9s MiB   complete %s in %s\n' "ab" "$(mib "$ab_rss")" "$ab_complete" "$ab_taken"
printf '  %-26s %9s MiB   complete %s in %s, HTML transferred %s\n' "benchq ab" "$(mib "$bq_rss")" \
	"$bq_complete" "$bq_taken" "$bq_html"
printf '  %-26s %9s MiB   complete %s in %s seconds, HTML transferred %s bytes\n' "all-in-one job (VmHWM)" \
	"$(mib "$aio_hwm")" "$job_complete" "$job_taken" "$job_html"
printf '  %-26s %9s MiB   (VmHWM before the job: %s MiB)\n' "  VmRSS after the job" "$(mib "$aio_rss")" "$(mib "$aio_start")"
printf '  %-26s %9s MiB\n' "  VmRSS 5 s later" "$(mib "$aio_rss_later")"
echo
echo "Endless chunked body ($endless):"
echo "  job, default cap (1 GiB), 4 requests, c=2: $endless_job; all-in-one VmHWM $(mib "$endless_hwm") MiB"
echo "  benchq ab --json -k -n 4 -c 2 --max-body 67108864: failed_requests $endless_bq_failed; peak RSS $(mib "$endless_bq_rss") MiB"
echo "    failed: $endless_bq_classes"
jq -r '.hints[]' "$work/endless.out" | sed 's/^/    hint: /'
echo
check "benchq ab peak RSS $(mib "$bq_rss") MiB < 64 MiB" "$bq_rss" $((64 << 10))
check "all-in-one peak RSS $(mib "$aio_hwm") MiB < 128 MiB" "$aio_hwm" $((128 << 10))
check "all-in-one peak RSS after the endless job $(mib "$endless_hwm") MiB < 128 MiB" "$endless_hwm" $((128 << 10))
check "benchq ab peak RSS on the endless body $(mib "$endless_bq_rss") MiB < 64 MiB" "$endless_bq_rss" $((64 << 10))
check_eq "benchq ab complete requests" "$bq_complete" "$n"
check_eq "benchq ab HTML transferred" "$bq_html" "$((n * size << 20)) bytes"
check_eq "job complete requests" "$job_complete" "$n"
check_eq "job html_transferred_bytes" "$job_html" "$((n * size << 20))"
check_eq "endless job body_too_large" "$endless_cut" 4
check_eq "benchq ab --max-body failed requests" "$endless_bq_failed" 4
exit "$fail"
