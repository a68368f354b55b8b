#!/usr/bin/env bash
# fidelity.sh: does a job run through the service measure what ab measures,
# for the client CPU that `benchq ab` spends?
#
# lighttpd and nginx (one worker each) serve seed 000's 25 600-byte image on
# 127.0.0.1, pinned to CPU 0. For each target x {keep-alive, close} x
# concurrency, four clients load the same URL with the same n, one after
# the other, pinned to CPU 1:
#
#   ab             Debian's ab (-k for keep-alive)
#   benchq-ab      `benchq ab`, the CLI
#   all-in-one     a one-point job on the all-in-one `benchq` (API, worker
#                  and embedded Redis in one process, on CPU 1)
#   serve+worker   the same job on `benchq serve` + `benchq worker` with
#                  redis-server: the worker generates the load, on CPU 1;
#                  redis-server and serve sit on CPU 0 with the target
#
#   benchq-ab-again  `benchq ab` once more, an A/A check: how far two
#                  runs of the same client land apart in this sitting
#
# Cells are alternated in rounds: each round runs every cell once, its
# clients back to back, their order rotated per round. A shared machine
# drifts by more than the 5 % asked for between minutes, so each ratio is
# paired within its round (a service run against the ab and benchq ab runs
# of the same cell in the same round) and a cell's ratio is the median of
# its rounds' ratios. A client's CPU is user + system time to the
# millisecond: bash's time (getrusage of the child) for the CLIs, and for
# the service process the nanoseconds its threads spent on a CPU
# (/proc/PID/task/*/schedstat) from the job's submission to its end,
# nothing subtracted. A cell passes when both service flavours reach
# >= 0.95 x ab's req/s and >= 0.95 x benchq ab's requests per CPU-second.
# The A/A ratio is printed beside them but decides nothing: it says how
# wide the noise is. Last, a short run (-n 100 -c 50, lighttpd, close)
# alternated --short-tries times: the median time taken of each service
# flavour and of benchq ab must be <= 1.2 x ab's.
#
# Only 127.0.0.1 is ever loaded; every run is bounded by its request count
# and a timeout. About 9 minutes at the defaults on a 2-core machine.
#
# Usage: bench/fidelity.sh [--rounds N] [--ka-requests N] [--close-requests N]
#                          [--concurrency 1,5,50,500] [--targets "lighttpd nginx"]
#                          [--short-tries N] [--no-short] [--no-aa]
set -euo pipefail

usage() {
	sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --rounds N           rounds of every cell (default 3)
  --ka-requests N      requests per keep-alive run (default 50000)
  --close-requests N   requests per close run (default 10000)
  --concurrency LIST   comma-separated concurrency levels (default 1,5,50,500)
  --targets "T ..."    among lighttpd nginx (default both)
  --short-tries N      tries of the short-run check (default 7)
  --no-short           skip the short-run check
  --no-aa              skip the A/A client (benchq-ab-again)
  --job-timeout S      longest wait for one job (default 300)
EOF
}

rounds=3
ka_requests=50000
close_requests=10000
concurrency="1,5,50,500"
targets="lighttpd nginx"
short_tries=7
short=1
aa=1
job_timeout=300
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift ;;
	--ka-requests) ka_requests=$2; shift ;;
	--close-requests) close_requests=$2; shift ;;
	--concurrency) concurrency=$2; shift ;;
	--targets) targets=$2; shift ;;
	--short-tries) short_tries=$2; shift ;;
	--no-short) short=0 ;;
	--no-aa) aa=0 ;;
	--job-timeout) job_timeout=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "fidelity.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "fidelity.sh: $*" >&2; exit 1; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for v in "$rounds" "$ka_requests" "$close_requests" "$short_tries" "$job_timeout"; do
	is_count "$v" || die "not a positive whole number: $v"
done
IFS=, read -r -a conc_list <<<"$concurrency"
max_c=1
for c in "${conc_list[@]}"; do
	is_count "$c" || die "--concurrency: not a positive whole number: $c"
	[ "$c" -gt "$max_c" ] && max_c=$c
done
for t in $targets; do
	case $t in lighttpd | nginx) ;; *) die "--targets: unknown target $t" ;; esac
done

# --- tools -------------------------------------------------------------------

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need ab apache2-utils
tools_need /usr/sbin/lighttpd lighttpd
tools_need /usr/sbin/nginx nginx
tools_need redis-server redis-server
tools_need jq jq
tools_need curl curl
tools_need taskset util-linux
tools_install fidelity.sh
command -v go >/dev/null || die "go is needed to build benchq"

tools_pin fidelity.sh "servers and clients"

# ab and benchq need a descriptor per connection, lighttpd its max-fds.
# Only the soft limit is raised: lowering the hard one would stop the
# servers raising theirs.
want_fds=$((max_c + 1024))
fds=$(ulimit -Hn)
[ "$fds" = unlimited ] || [ "$fds" -gt 65536 ] && fds=65536
[ "$fds" -ge "$want_fds" ] || die "c=$max_c needs ulimit -n >= $want_fds; the hard limit is $(ulimit -Hn)"
ulimit -Sn "$fds"

# --- processes ---------------------------------------------------------------

servers_init "$work"
servers_seed_files "$work/www"
declare -A url
for t in $targets; do
	port=$(servers_free_port)
	case $t in
	# Keep-alive connections are never closed by the server mid-run, as
	# with ab's defaults against a tuned server: both clients measure the
	# same thing, not the server's reconnect policy.
	lighttpd) servers_start_lighttpd "$port" "$server_cpu" "$work/www" \
		'server.max-keep-alive-requests = 10000000
server.listen-backlog = 4096' ;;
	nginx) servers_start_nginx "$port" "$server_cpu" "$work/www" \
		'sendfile on; keepalive_requests 10000000;' ;;
	esac
	url[$t]="http://127.0.0.1:$port/test.jpg"
	servers_wait "${url[$t]}" "$t" || exit 1
done

benchq_build

# Both services admit this many jobs: the script submits one per cell.
quota_env=(BENCHQ_MAX_ACTIVE_JOBS=1000000 BENCHQ_SUBMISSIONS_PER_MINUTE=1000000)

aio_port=$(servers_free_port)
aio_base="http://127.0.0.1:$aio_port"
# Ephemeral: a scratch all-in-one with its Redis in-process, as this
# comparison has always measured it, and not a developer's data directory.
benchq_start aio.log "$client_cpu" "${quota_env[@]}" BENCHQ_EPHEMERAL=true BENCHQ_ADDR="127.0.0.1:$aio_port"
aio_pid=$benchq_pid

benchq_redis "$(servers_free_port)" "$server_cpu" || exit 1
key=$(benchq_key "$redis_url" fidelity --max-active-jobs 1000000 --submissions-per-minute 1000000) || exit 1
sv_port=$(servers_free_port)
sv_base="http://127.0.0.1:$sv_port"
benchq_start serve.log "$server_cpu" "${quota_env[@]}" BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.0/8 \
	serve --addr "127.0.0.1:$sv_port"
sv_pid=$benchq_pid
benchq_start worker.log "$client_cpu" BENCHQ_REDIS_URL="$redis_url" BENCHQ_ALLOW_TARGETS=127.0.0.0/8 worker
worker_pid=$benchq_pid

benchq_ready "$aio_base" aio.log || exit 1
benchq_ready "$sv_base" serve.log worker.log || exit 1

# --- measurement -------------------------------------------------------------

# cpu_ns PID: nanoseconds the process's threads have run on a CPU. Go
# keeps its threads for the process's life, so none is lost between two
# reads.
cpu_ns() {
	local f v sum=0
	for f in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$f" 2>/dev/null && sum=$((sum + v))
	done
	echo "$sum"
}
now() { date +%s.%N; }

# run_cli CLIENT URL KEEPALIVE C N: sets rps, cpu, complete, failed, taken,
# field (always "-": the CLIs have no such field).
run_cli() {
	local client=$1 u=$2 ka=$3 c=$4 n=$5 cmd
	case $client in
	ab) cmd=(ab) ;;
	benchq-ab | benchq-ab-again) cmd=("$work/benchq" ab) ;;
	esac
	local flags=(-q -c "$c" -n "$n")
	[ "$ka" = true ] && flags+=(-k)
	# bash's time reports the children's getrusage to the millisecond
	# (/usr/bin/time to 10 ms, 1 % of a one-second run).
	local TIMEFORMAT='%3U %3S' rc=0
	{ time in_bg timeout "$job_timeout" taskset -c "$client_cpu" "${cmd[@]}" "${flags[@]}" "$u" \
		>"$work/out" 2>"$work/err"; } 2>"$work/time" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "fidelity.sh: $client ${flags[*]} $u failed:" >&2
		tail -3 "$work/err" >&2
	fi
	local user sys
	read -r user sys < <(tail -n 1 "$work/time")
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.3f", u + s }')
	rps=$(awk '/^Requests per second:/ {print $4}' "$work/out")
	complete=$(awk '/^Complete requests:/ {print $3}' "$work/out")
	failed=$(awk '/^Failed requests:/ {print $3}' "$work/out")
	taken=$(awk '/^Time taken for tests:/ {print $5}' "$work/out")
	local non2xx
	non2xx=$(awk '/^Non-2xx responses:/ {print $3}' "$work/out")
	failed=$((${failed:-0} + ${non2xx:-0}))
	rps=${rps:-0} complete=${complete:-0} taken=${taken:-0} field="-"
}

# idle rate of each service process, CPU-s per wall second, measured once.
declare -A idle_rate
measure_idle() { # pid
	local t0 c0 t1 c1
	t0=$(now) c0=$(cpu_ns "$1")
	sleep 3
	t1=$(now) c1=$(cpu_ns "$1")
	awk -v a="$c0" -v b="$c1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.5f", (b - a) / 1e9 / (e - s) }'
}

# run_job FLAVOUR URL KEEPALIVE C N: the same as run_cli, through the
# service; field is the result's client_cpu_s, "-" when it has none.
run_job() {
	local flavour=$1 u=$2 ka=$3 c=$4 n=$5 base pid api_pid auth
	case $flavour in
	all-in-one) base=$aio_base pid=$aio_pid api_pid=$aio_pid auth=() ;;
	serve+worker) base=$sv_base pid=$worker_pid api_pid=$sv_pid auth=(-H "Authorization: Bearer $key") ;;
	esac
	local spec loc c0 c1
	spec=$(jq -nc --arg u "$u" --argjson ka "$ka" --argjson c "$c" --argjson n "$n" \
		'{name: "fidelity", targets: [{url: $u}], request: {keepalive: $ka},
		  sweep: {concurrency: [$c], requests: [$n], repeats: 1}}')
	kill -0 "$pid" 2>/dev/null || { tail -20 "$work/aio.log" "$work/worker.log" >&2; die "the $flavour process exited"; }
	c0=$(cpu_ns "$pid")
	loc=$(benchq_submit "$base" "$spec" "${auth[@]}") || die "$flavour refused the job"
	benchq_wait_job "$base$loc" "$job_timeout" "$api_pid" "${auth[@]}" || exit 1
	[ "$job_status" = succeeded ] || die "$flavour: job $base$loc $job_status"
	c1=$(cpu_ns "$pid")
	benchq_results "$base$loc" "${auth[@]}" || exit 1
	# Nothing is subtracted: the job's CPU includes its submission, pick-up,
	# progress writes and stored result, as a user's job does.
	cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { v = (b - a) / 1e9; if (v < 0.001) v = 0.001; printf "%.3f", v }')
	read -r rps complete failed taken field < <(jq -r '.runs[0] as $r | $r.result |
		[.requests_per_second, .complete_requests, (.failed_requests + .non_2xx_responses),
		 .time_taken_s, (.client_cpu_s // $r.client_cpu_s // "-")] | @tsv' "$work/results.json") ||
		die "$flavour: no result in $base$loc/results"
}

run_client() { # client url keepalive c n
	case $1 in
	ab | benchq-ab | benchq-ab-again) run_cli "$@" ;;
	*) run_job "$@" ;;
	esac
}

clients=(ab benchq-ab all-in-one serve+worker)
[ "$aa" = 1 ] && clients+=(benchq-ab-again)
rows="$work/rows"
: >"$rows"

echo "fidelity.sh: warm-up: one job on each service" >&2
warm_url=${url[${targets%% *}]}
for flavour in all-in-one serve+worker; do
	idle_rate[$flavour]=0
	run_job "$flavour" "$warm_url" true 5 1000
done
idle_rate[all-in-one]=$(measure_idle "$aio_pid")
idle_rate[serve+worker]=$(measure_idle "$worker_pid")
echo "fidelity.sh: idle CPU: all-in-one ${idle_rate[all-in-one]} s/s, worker ${idle_rate[serve+worker]} s/s (not subtracted)" >&2

for round in $(seq "$rounds"); do
	for t in $targets; do
		for mode in keep-alive close; do
			ka=false n=$close_requests
			[ "$mode" = keep-alive ] && ka=true n=$ka_requests
			for c in "${conc_list[@]}"; do
				nc=$((n > c ? n : c))
				for i in "${!clients[@]}"; do
					client=${clients[$(((i + round) % ${#clients[@]}))]}
					echo "fidelity.sh: round $round/$rounds $t $mode c=$c n=$nc $client" >&2
					run_client "$client" "${url[$t]}" "$ka" "$c" "$nc"
					[ "$complete" = "$nc" ] && [ "$failed" = 0 ] ||
						echo "fidelity.sh: warning: $client $t $mode c=$c: $complete of $nc complete, $failed failed" >&2
					echo "$round|$t|$mode|$c|$client|$rps|$cpu|$complete|$failed|$field" >>"$rows"
				done
			done
		done
	done
done

short_rows="$work/short"
: >"$short_rows"
if [ "$short" = 1 ]; then
	short_clients=(ab benchq-ab all-in-one serve+worker)
	short_target=lighttpd
	[ -n "${url[lighttpd]:-}" ] || short_target=${targets%% *}
	for try in $(seq "$short_tries"); do
		for i in "${!short_clients[@]}"; do
			client=${short_clients[$(((i + try) % ${#short_clients[@]}))]}
			echo "fidelity.sh: short run $try/$short_tries $client" >&2
			run_client "$client" "${url[$short_target]}" false 50 100
			echo "$client|$taken" >>"$short_rows"
		done
	done
fi

# --- report ------------------------------------------------------------------

echo
echo "fidelity.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, rounds $rounds, keep-alive n=$ka_requests, close n=$close_requests"
echo "pinning: $targets, redis-server and benchq serve on CPU $server_cpu;" \
	"ab, benchq ab, the all-in-one benchq and benchq worker on CPU $client_cpu"
echo "CPU-s: user + sys of the client process (the service: all-in-one or worker process, from submission to the job's end, nothing subtracted)"
echo
status=0
awk -F'|' -v aa="$aa" '
	function median(list,   v, k, i, j, x) {
		k = split(list, v, " ")
		for (i = 2; i <= k; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	}
	function spread(list,   v, k, i, lo, hi) {
		k = split(list, v, " "); lo = hi = v[1] + 0
		for (i = 2; i <= k; i++) { if (v[i] + 0 < lo) lo = v[i] + 0; if (v[i] + 0 > hi) hi = v[i] + 0 }
		return sprintf("%.3f [%.2f-%.2f]", median(list), lo, hi)
	}
	# ratios CELL CLIENT: sets qa and qc to the lists of per-round ratios
	# of CLIENT to ab (req/s) and to benchq ab (req/CPU-s) in CELL.
	function ratios(cell, client,   k, v, i, r, a, b) {
		qa = qc = ""
		k = split(rl[cell], v, " ")
		for (i = 1; i <= k; i++) {
			r = cell "|" v[i]
			a = R[r "|ab"]; b = P[r "|benchq-ab"]
			if (!((r "|" client) in R)) continue
			qa = qa " " (a > 0 ? R[r "|" client] / a : 0)
			qc = qc " " (b > 0 ? P[r "|" client] / b : 0)
		}
	}
	{
		cell = $2 "|" $3 "|" $4; key = cell "|" $5; r = cell "|" $1
		if (!(cell in seen)) { seen[cell] = 1; cells[++ncells] = cell }
		if (!(r in rseen)) { rseen[r] = 1; rl[cell] = rl[cell] " " $1 }
		rps[key] = rps[key] " " $6
		rpc[key] = rpc[key] " " ($7 > 0 ? $8 / $7 : 0)
		cpu[key] = cpu[key] " " $7
		R[r "|" $5] = $6; P[r "|" $5] = $7 > 0 ? $8 / $7 : 0
		if ($10 != "-") fld[key] = fld[key] " " $10
		if ($9 != 0 || $8 == 0) bad[key] = 1
	}
	END {
		ncl = split("ab benchq-ab all-in-one serve+worker" (aa ? " benchq-ab-again" : ""), cl, " ")
		printf "%-8s %-10s %5s %-15s %8s %7s %9s %7s %19s %19s\n", "target", "mode", "c", "client",
			"req/s", "CPU-s", "req/CPU-s", "cpu_s", "svc/ab", "svc/CLI"
		for (i = 1; i <= ncells; i++) {
			split(cells[i], p, "|")
			for (j = 1; j <= ncl; j++) {
				key = cells[i] "|" cl[j]
				f = (key in fld) ? sprintf("%.3f", median(fld[key])) : "-"
				r1 = r2 = ""
				if (j >= 3) {
					ratios(cells[i], cl[j])
					q1[j] = median(qa); q2[j] = median(qc)
					r1 = spread(qa); r2 = spread(qc)
				}
				printf "%-8s %-10s %5s %-15s %8.0f %7.3f %9.0f %7s %19s %19s%s\n", p[1], p[2], p[3], cl[j],
					median(rps[key]), median(cpu[key]), median(rpc[key]), f, r1, r2, (key in bad) ? "  !failures" : ""
			}
			ok = q1[3] >= 0.95 && q2[3] >= 0.95 && q1[4] >= 0.95 && q2[4] >= 0.95
			for (j = 1; j <= 4; j++) if ((cells[i] "|" cl[j]) in bad) ok = 0
			verdict[i] = sprintf("%s %s %s c=%s: all-in-one %.3f/%.3f, serve+worker %.3f/%.3f", ok ? "PASS" : "FAIL",
				p[1], p[2], p[3], q1[3], q2[3], q1[4], q2[4])
			if (aa) verdict[i] = verdict[i] sprintf("; A/A %.3f/%.3f", q1[5], q2[5])
			if (!ok) failed = 1
		}
		print ""
		print "svc/ab: a client'"'"'s req/s / ab'"'"'s in the same round; svc/CLI: its req/CPU-s / benchq ab'"'"'s in the same"
		print "round; median [lowest-highest] over rounds. benchq-ab-again is the A/A check: benchq ab against itself."
		print "verdict per cell (svc/ab / svc/CLI), pass when every service ratio >= 0.95 and no run failed a request:"
		for (i = 1; i <= ncells; i++) print verdict[i]
		exit failed
	}' "$rows" || status=1

if [ "$short" = 1 ]; then
	echo
	echo "short run: -n 100 -c 50 against $short_target, no keep-alive, median time taken of $short_tries alternated tries"
	awk -F'|' '
		function median(list,   v, k, i, j, x) {
			k = split(list, v, " ")
			for (i = 2; i <= k; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
			return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
		}
		{ t[$1] = t[$1] " " $2 }
		END {
			base = median(t["ab"])
			split("ab benchq-ab all-in-one serve+worker", cl, " ")
			for (j = 1; j <= 4; j++) {
				m = median(t[cl[j]]); r = base > 0 ? m / base : 0
				if (j == 1) { printf "%-13s %9.4f s\n", cl[j], m; continue }
				ok = r <= 1.2
				if (!ok) failed = 1
				printf "%-13s %9.4f s  %.2fx ab  %s\n", cl[j], m, r, ok ? "PASS" : "FAIL (> 1.2x)"
			}
			exit failed
		}' "$short_rows" || status=1
fi
exit "$status"
