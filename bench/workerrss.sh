#!/usr/bin/env bash
# workerrss.sh: how much memory does one `benchq worker` process use, idle
# and under a run? The numbers size the worker's resources in
# deploy/worker.yaml.
#
# redis-server (its own temporary directory, a loopback port), nginx (one
# worker, pinned to CPU 0) serving a small file on 127.0.0.1, `benchq
# serve` and one `benchq worker --workers 1` (pinned to CPU 1), as
# separate processes the way the Kubernetes manifests run them. An API key
# is created with `benchq keys add`; then, one after the other, a
# one-point job per concurrency in -c (default 1,64,512), each of -n
# requests with keep-alive.
#
# The worker's VmRSS is read from /proc/PID/status once it is up and idle,
# then its VmHWM (peak since start) after each job, and its VmRSS 5 s
# after the last job. The API's VmHWM is printed too. Exits 1 when a job
# does not succeed with every request complete. Only 127.0.0.1 is ever
# loaded; every job is bounded by its request count and a timeout. Under a
# minute at the defaults.
#
# Usage: bench/workerrss.sh [-n N] [-c C1,C2,...] [--job-timeout S]
set -euo pipefail

usage() {
	sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  -n N               requests per job (default 200000)
  -c C1,C2,...       concurrencies, one job each (default 1,64,512)
  --job-timeout S    longest wait for one job (default 120)
EOF
}

requests=200000
concurrencies=1,64,512
job_timeout=120
while [ $# -gt 0 ]; do
	case "$1" in
	-n) requests=$2; shift ;;
	-c) concurrencies=$2; shift ;;
	--job-timeout) job_timeout=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "workerrss.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "workerrss.sh: $*" >&2; exit 1; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for v in "$requests" "$job_timeout" ${concurrencies//,/ }; do
	is_count "$v" || die "not a positive whole number: $v"
done

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need /usr/sbin/nginx nginx
tools_need redis-server redis-server
tools_need jq jq
tools_need curl curl
tools_need taskset util-linux
tools_install workerrss.sh
command -v go >/dev/null || die "go is needed to build benchq"
tools_pin workerrss.sh "nginx, redis-server and benchq"

servers_init "$work"
mkdir -p "$work/www" "$work/redis"
echo ok >"$work/www/ok.txt"
chmod -R a+rX "$work/www"
port=$(servers_free_port)
servers_start_nginx "$port" "$server_cpu" "$work/www" 'keepalive_requests 10000000;'
target="http://127.0.0.1:$port/ok.txt"
servers_wait "$target" nginx || exit 1

benchq_build
# Persistence as the manifests' Redis has it (append-only file).
benchq_redis "$(servers_free_port)" "$server_cpu" --dir "$work/redis" --appendonly yes || exit 1

api_port=$(servers_free_port)
api="http://127.0.0.1:$api_port"
# serve and worker admit public targets only, unless allowlisted.
svc_env=(BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.1/32)
benchq_start api.log "$server_cpu" "${svc_env[@]}" serve --addr "127.0.0.1:$api_port"
api_pid=$benchq_pid
benchq_start worker.log "$client_cpu" "${svc_env[@]}" worker --workers 1
worker_pid=$benchq_pid
benchq_ready "$api" api.log || exit 1
key=$(benchq_key "$redis_url" workerrss --admin) || exit 1
[ -n "$key" ] || die "benchq keys add printed no key"
sleep 2 # the worker connects and settles

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; } # KiB -> MiB
status_kib() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; } # pid field

idle_rss=$(status_kib "$worker_pid" VmRSS)
idle_hwm=$(status_kib "$worker_pid" VmHWM)

fail=0
lines=()
for c in ${concurrencies//,/ }; do
	echo "workerrss.sh: $requests requests at c=$c" >&2
	spec=$(jq -nc --arg u "$target" --argjson c "$c" --argjson n "$requests" \
		'{name: "workerrss", targets: [{url: $u}], request: {keepalive: true}, sweep: {concurrency: [$c], requests: [$n]}}')
	loc=$(benchq_submit "$api" "$spec" -H "Authorization: Bearer $key") || exit 1
	benchq_wait_job "$api$loc" "$job_timeout" "$api_pid" -H "Authorization: Bearer $key" || exit 1
	status=$job_status
	benchq_results "$api$loc" -H "Authorization: Bearer $key" || exit 1
	jq '.runs[0].result' "$work/results.json" >"$work/result.json"
	complete=$(jq -r .complete_requests "$work/result.json")
	rps=$(jq -r .requests_per_second "$work/result.json")
	hwm=$(status_kib "$worker_pid" VmHWM)
	lines+=("$(printf '  c=%-6s worker VmHWM %7s MiB   %s, complete %s, %s req/s' "$c" "$(mib "$hwm")" "$status" "$complete" "$rps")")
	if [ "$status" != succeeded ] || [ "$complete" != "$requests" ]; then
		echo "workerrss.sh: job at c=$c: $status, complete $complete of $requests" >&2
		fail=1
	fi
done
sleep 5
after_rss=$(status_kib "$worker_pid" VmRSS)
api_hwm=$(status_kib "$api_pid" VmHWM)

echo
echo "benchq worker --workers 1, nginx on 127.0.0.1, $requests keep-alive requests per job:"
printf '  idle     worker VmRSS %7s MiB   (VmHWM %s MiB)\n' "$(mib "$idle_rss")" "$(mib "$idle_hwm")"
printf '%s\n' "${lines[@]}"
printf '  after    worker VmRSS %7s MiB, 5 s after the last job\n' "$(mib "$after_rss")"
printf '  api      benchq serve VmHWM %s MiB\n' "$(mib "$api_hwm")"
exit "$fail"
