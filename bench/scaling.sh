#!/usr/bin/env bash
# scaling.sh: does a point split over k worker processes (sweep.shards)
# send as much load as its k parts do, each on a worker alone?
#
# nginx (one worker process) serves seed 004's 442-byte status page on
# 127.0.0.1, pinned to CPU 0 with redis-server and benchq serve. For each
# k in 1..--max-k, k `benchq worker` processes run, worker i pinned to the
# client CPUs in turn (CPU 1 on a 2-core machine, so there they share
# it), and every round runs, in rotated order:
#
#   sharded   one job of the point (concurrency C, N requests, keep-alive)
#             with sweep.shards k: the merged run's req/s
#   alone i   for each shard i, a job of shard i's part alone (its share
#             of C and N, as job.ShardPlan splits them) on one worker:
#             its req/s
#
# and reports, as medians over rounds, the merged req/s, the sum of the
# parts' req/s alone, their ratio (1.0: splitting costs nothing; below:
# the shards slowed each other, through shared CPUs or the target), the
# speed-up over k = 1, and how far apart the shards' starts were.
#
# Only 127.0.0.1 is ever loaded; every run is bounded by its request count
# and every wait by --job-timeout. About 2 minutes at the defaults.
#
# Usage: bench/scaling.sh [--max-k K] [--rounds N] [--concurrency C]
#                         [--requests N] [--job-timeout S]
set -euo pipefail

usage() {
	sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --max-k K          largest shard count (default 3; up to 8 on a machine with the cores)
  --rounds N         rounds of every measurement (default 3)
  --concurrency C    the point's concurrency (default 12; at least K)
  --requests N       the point's requests (default 60000)
  --job-timeout S    longest wait for one job (default 300)
EOF
}

max_k=3
rounds=3
conc=12
requests=60000
job_timeout=300
while [ $# -gt 0 ]; do
	case "$1" in
	--max-k) max_k=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--concurrency) conc=$2; shift ;;
	--requests) requests=$2; shift ;;
	--job-timeout) job_timeout=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "scaling.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "scaling.sh: $*" >&2; exit 1; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for v in "$max_k" "$rounds" "$conc" "$requests" "$job_timeout"; do
	is_count "$v" || die "not a positive whole number: $v"
done
[ "$max_k" -le 64 ] || die "--max-k is at most 64 (sweep.shards' limit)"
[ "$conc" -ge "$max_k" ] || die "--concurrency $conc is below --max-k $max_k: every shard needs a worker"

# --- tools -------------------------------------------------------------------

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need /usr/sbin/nginx nginx
tools_need redis-server redis-server
tools_need jq jq
tools_need curl curl
tools_need taskset util-linux
tools_install scaling.sh
command -v go >/dev/null || die "go is needed to build benchq"

tools_pin scaling.sh "nginx, redis-server, benchq serve and the workers"
ncpu=$(nproc)
# The client CPUs the workers take in turn: every CPU but the server's.
client_cpus=()
for ((c = 0; c < ncpu; c++)); do
	[ "$c" = "$server_cpu" ] && [ "$ncpu" -gt 1 ] && continue
	client_cpus+=("$c")
done

# --- processes ---------------------------------------------------------------

servers_init "$work"
servers_seed_files "$work/www"
port=$(servers_free_port)
servers_start_nginx "$port" "$server_cpu" "$work/www" 'keepalive_requests 10000000;'
url="http://127.0.0.1:$port/status.html"
servers_wait "$url" nginx || exit 1

benchq_build
benchq_redis "$(servers_free_port)" "$server_cpu" || exit 1
key=$(benchq_key "$redis_url" scaling --max-active-jobs 1000000 --submissions-per-minute 1000000) || exit 1
auth=(-H "Authorization: Bearer $key")
svc_env=(BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.0/8 BENCHQ_SHARD_WAIT=30s)
sv_port=$(servers_free_port)
base="http://127.0.0.1:$sv_port"
benchq_start serve.log "$server_cpu" "${svc_env[@]}" serve --addr "127.0.0.1:$sv_port"
sv_pid=$benchq_pid
benchq_ready "$base" serve.log || exit 1

workers=() # pids of the workers running now
start_workers() { # k
	local i cpu
	for ((i = 0; i < $1; i++)); do
		cpu=${client_cpus[$((i % ${#client_cpus[@]}))]}
		benchq_start "worker-$1-$i.log" "$cpu" "${svc_env[@]}" worker
		workers+=("$benchq_pid")
	done
}
stop_workers() {
	procs_stop "${workers[@]}"
	workers=()
}

# --- measurement -------------------------------------------------------------

# run_job C N SHARDS: submits the point and waits for it; sets rps and
# spread (ms between the first and the last shard start, "-" unsharded).
run_job() {
	local c=$1 n=$2 k=$3 spec loc
	spec=$(jq -nc --arg u "$url" --argjson c "$c" --argjson n "$n" --argjson k "$k" \
		'{name: "scaling", targets: [{url: $u}], request: {keepalive: true},
		  sweep: {concurrency: [$c], requests: [$n], shards: $k}}')
	loc=$(benchq_submit "$base" "$spec" "${auth[@]}") || exit 1
	benchq_wait_job "$base$loc" "$job_timeout" "$sv_pid" "${auth[@]}" || exit 1
	[ "$job_status" = succeeded ] || die "job $loc $job_status"
	benchq_results "$base$loc" "${auth[@]}" || exit 1
	read -r rps complete < <(jq -r '.runs[0].result | [.requests_per_second, .complete_requests] | @tsv' "$work/results.json")
	[ "$complete" = "$n" ] || echo "scaling.sh: warning: $complete of $n requests complete (c=$c shards=$k)" >&2
	spread=$(jq -r '.runs[0].shards // [] | if length > 1 then
		(map(.started_at | capture("T(?<h>[0-9]+):(?<m>[0-9]+):(?<s>[0-9.]+)Z") | (.h | tonumber) * 3600 + (.m | tonumber) * 60 + (.s | tonumber))
		| (max - min) * 1000 | . * 100 | round / 100 | tostring) else "-" end' "$work/results.json")
}

# part P K: shard i's part of P over K, as job.Split: the first P%K parts one larger.
part() { echo $(($1 / $3 + ($2 < $1 % $3 ? 1 : 0))); }

rows="$work/rows"
: >"$rows"
for ((k = 1; k <= max_k; k++)); do
	stop_workers
	start_workers "$k"
	echo "scaling.sh: k=$k: $k workers on CPUs ${client_cpus[*]}; warm-up" >&2
	run_job "$k" "$((k * 1000))" "$k"
	for round in $(seq "$rounds"); do
		# Rotate the order: sharded first, then the parts, then the other way round.
		order=(sharded)
		for ((i = 0; i < k; i++)); do order+=("$i"); done
		if [ $((round % 2)) = 0 ]; then order=("${order[@]:1}" sharded); fi
		sum=0 merged=0 spread="-"
		for m in "${order[@]}"; do
			if [ "$m" = sharded ]; then
				echo "scaling.sh: k=$k round $round/$rounds: sharded c=$conc n=$requests" >&2
				run_job "$conc" "$requests" "$k"
				merged=$rps
				merged_spread=$spread
			else
				ci=$(part "$conc" "$m" "$k") ni=$(part "$requests" "$m" "$k")
				echo "scaling.sh: k=$k round $round/$rounds: part $m alone c=$ci n=$ni" >&2
				run_job "$ci" "$ni" 1
				sum=$(awk -v a="$sum" -v b="$rps" 'BEGIN { printf "%.2f", a + b }')
			fi
		done
		echo "$k|$round|$merged|$sum|$merged_spread" >>"$rows"
	done
done
stop_workers

# --- report ------------------------------------------------------------------

echo
echo "scaling.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $ncpu CPUs, point c=$conc n=$requests keep-alive against nginx (1 worker), rounds $rounds"
echo "pinning: nginx, redis-server and benchq serve on CPU $server_cpu; workers on CPUs ${client_cpus[*]} in turn"
[ "${#client_cpus[@]}" -ge "$max_k" ] || echo "note: $max_k workers share ${#client_cpus[@]} client CPU(s): a ratio below 1 here measures that sharing, not the coordination"
echo
awk -F'|' '
	function median(list,   v, k, i, j, x) {
		k = split(list, v, " ")
		for (i = 2; i <= k; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	}
	{ m[$1] = m[$1] " " $3; s[$1] = s[$1] " " $4; r[$1] = r[$1] " " ($4 > 0 ? $3 / $4 : 0); if ($5 != "-") sp[$1] = sp[$1] " " $5; if ($1 > maxk) maxk = $1
		row[++n] = sprintf("k=%d round %d: %.0f / %.0f = %.3f", $1, $2, $3, $4, $4 > 0 ? $3 / $4 : 0) }
	END {
		printf "%3s %14s %18s %8s %12s %14s\n", "k", "merged req/s", "sum alone req/s", "ratio", "vs k=1", "start spread"
		for (k = 1; k <= maxk; k++) {
			M = median(m[k]); if (k == 1) M1 = M
			up = 0; if (M1 > 0) up = M / M1
			spread = "-"; if (k in sp) spread = sprintf("%.2f ms", median(sp[k]))
			printf "%3d %14.0f %18.0f %8.3f %12.3f %14s\n", k, M, median(s[k]), median(r[k]), up, spread
		}
		print ""
		print "per round (k round: merged / sum alone = ratio):"
		for (i = 1; i <= n; i++) print "  " row[i]
		print ""
		print "ratio: merged req/s of the sharded run / the sum of its parts'"'"' req/s, each part run alone on one worker (median of per-round ratios)"
	}' "$rows"
