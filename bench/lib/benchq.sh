# shellcheck shell=bash
# shellcheck disable=SC2154 # work and pids are setup.sh's, server_cpu tools_pin's
# benchq.sh: benchq built from this tree and run as the bench scripts run
# it, on 127.0.0.1: its Redis, its processes, its jobs. Sourced by
# setup.sh, after procs.sh: every process started here goes in pids
# (stopped at exit), every file in work. Messages name the script ($0).
# Then:
#
#   benchq_build [PKG...]            go build ./cmd/benchq into $work/benchq
#                                    and each ./bench/PKG into $work/PKG
#   benchq_redis PORT CPU [ARG...]   redis-server as benchq needs it on
#                                    127.0.0.1:PORT pinned to CPU, waits for
#                                    its PING; sets redis_url and redis_pid.
#                                    ARGs come last and win (--appendonly yes)
#   benchq_key REDIS_URL NAME [FLAG...]
#                                    prints a new API key (benchq keys add)
#   benchq_start LOG CPU [VAR=VALUE...] [ARG...]
#                                    $work/benchq ARG... (no ARG: the all-in-one)
#                                    in the background pinned to CPU, with the
#                                    VARs in its environment, its output in
#                                    $work/LOG; sets benchq_pid
#   benchq_ready BASE [LOG...]       waits (10 s at most) until BASE/readyz
#                                    answers 2xx, else prints the LOGs
#   benchq_submit BASE SPEC [CURL_ARG...]
#                                    POSTs SPEC (JSON, or @FILE) to BASE/v1/jobs,
#                                    prints the job's path (its Location)
#   benchq_wait_job JOB SECONDS PID [CURL_ARG...]
#                                    waits until the job at URL JOB ends; sets
#                                    job_status (succeeded, failed, canceled)
#   benchq_results JOB [CURL_ARG...] JOB's results into $work/results.json
#
# CURL_ARGs are curl's (the key: -H "Authorization: Bearer KEY"). The
# functions that can fail say why on stderr and return 1.

# shellcheck disable=SC2120 # most scripts build benchq alone
benchq_build() { # [pkg...]
	local repo pkg
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	echo "${0##*/}: building benchq${*:+ and $*}" >&2
	(cd "$repo" && go build -o "$work/benchq" ./cmd/benchq) || return 1
	for pkg in "$@"; do
		(cd "$repo" && go build -o "$work/$pkg" "./bench/$pkg") || return 1
	done
}

# Redis as benchq requires it (noeviction), without persistence: the bench
# scripts measure the service, not the disk.
benchq_redis() { # port cpu [arg...]
	local port=$1 cpu=$2
	shift 2
	taskset -c "$cpu" redis-server --port "$port" --bind 127.0.0.1 \
		--save '' --appendonly no --maxmemory-policy noeviction --dir "$work" "$@" \
		>"$work/redis.log" 2>&1 &
	# shellcheck disable=SC2034 # read by the sourcing script
	redis_pid=$! redis_url="redis://127.0.0.1:$port/0"
	pids+=("$redis_pid")
	for _ in $(seq 50); do
		redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "${0##*/}: redis-server did not answer on port $port within 5 s" >&2
	cat "$work/redis.log" >&2
	return 1
}

benchq_key() { # redis_url name [flag...]
	local url=$1 name=$2
	shift 2
	BENCHQ_REDIS_URL=$url "$work/benchq" keys add "$name" "$@" 2>"$work/keys.err" ||
		{ cat "$work/keys.err" >&2; echo "${0##*/}: benchq keys add $name failed" >&2; return 1; }
}

benchq_start() { # log cpu [VAR=VALUE...] [arg...]
	local log=$1 cpu=$2 vars=()
	shift 2
	while [ $# -gt 0 ] && [[ $1 =~ ^[A-Z_][A-Z0-9_]*= ]]; do
		vars+=("$1")
		shift
	done
	env "${vars[@]}" taskset -c "$cpu" "$work/benchq" "$@" >"$work/$log" 2>&1 &
	benchq_pid=$!
	pids+=("$benchq_pid")
}

benchq_ready() { # base [log...]
	local base=$1 log
	shift
	for _ in $(seq 100); do
		curl -sf -o /dev/null --max-time 2 "$base/readyz" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "${0##*/}: benchq at $base was not ready within 10 s" >&2
	for log in "$@"; do cat "$work/$log" >&2; done
	return 1
}

benchq_submit() { # base spec [curl_arg...]
	local base=$1 spec=$2 loc
	shift 2
	loc=$(curl -sS --max-time 10 -o "$work/resp" -w '%header{location}' -f "$@" \
		-H 'Content-Type: application/json' --data-binary "$spec" "$base/v1/jobs") ||
		{ cat "$work/resp" >&2; echo "${0##*/}: $base refused the job $spec" >&2; return 1; }
	[ -n "$loc" ] || { echo "${0##*/}: $base answered no Location" >&2; return 1; }
	echo "$loc"
}

# The event stream ends after the job's last event, so one idle connection
# waits instead of a poll loop spending the CPU being measured; the status
# is read once it ends. It runs under in_bg so that a signal stops the
# script at once.
benchq_wait_job() { # job seconds pid [curl_arg...]
	local job=$1 seconds=$2 pid=$3 deadline
	shift 3
	deadline=$(($(date +%s) + seconds))
	in_bg timeout "$seconds" taskset -c "$server_cpu" curl -sSN --max-time "$seconds" "$@" \
		"$job/events" >/dev/null 2>&1 || true
	while :; do
		job_status=$(curl -fsS --max-time 10 "$@" "$job" | jq -r .status) || job_status="?"
		case $job_status in
		succeeded) return 0 ;;
		failed | canceled)
			echo "${0##*/}: job $job $job_status:" >&2
			curl -fsS --max-time 10 "$@" "$job" >&2 || true
			echo >&2
			return 0
			;;
		esac
		kill -0 "$pid" 2>/dev/null || { echo "${0##*/}: the benchq process $pid exited, job $job $job_status" >&2; return 1; }
		[ "$(date +%s)" -lt "$deadline" ] || { echo "${0##*/}: job $job still $job_status after ${seconds}s" >&2; return 1; }
		sleep 0.2
	done
}

benchq_results() { # job [curl_arg...]
	local job=$1
	shift
	curl -fsS --max-time 30 "$@" "$job/results" >"$work/results.json" ||
		{ echo "${0##*/}: GET $job/results failed" >&2; return 1; }
}
