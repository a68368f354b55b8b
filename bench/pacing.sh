#!/usr/bin/env bash
# pacing.sh: how close to its schedule does the open model start each
# request, beside vegeta, in one sitting?
#
# Two halves. First internal/loadgen's BenchmarkPacing: the engine's own
# send lag (Measurement.Open.SendLag: actual start - intended start) at
# each rate against a pinned nginx, with its run's nudge and without.
# Then the target's view, which measures both tools the same way:
# bench/arrivals serves 127.0.0.1 and notes when each request arrived;
# `benchq ab --rate R` (open model, keep-alive, -c 64) and `vegeta attack
# -rate R/1s` (keep-alive, at most 64 workers) take turns against a fresh
# one, DURATION seconds per run (both stop sending then, behind or not),
# ROUNDS rounds, each rate. The k-th arrival
# is matched with the k-th slot of the schedule (k/R after the first) and
# its send-time error is how much later than its slot it arrived, counted
# from the best-timed arrival; the table prints each tool's median over
# rounds of p50 and p99, and benchq's ratio to vegeta's.
#
# The target is pinned to CPU 1 and the clients to CPU 0. Only 127.0.0.1
# is ever loaded; every run is bounded by its request count and time.
# Default settings take about 8 minutes on a loaded 2-core machine;
# --quick about 4.
#
# Usage: bench/pacing.sh [--quick] [--rounds N] [--duration S] [--rates "1000 10000 50000"] [--no-pair]
set -euo pipefail

usage() {
	sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF2'

  --quick          --rounds 1 --duration 3, the pair once
  --rounds N       rounds of each tool at each rate (default 3)
  --duration S     seconds per run (default 5)
  --rates "R ..."  rates in requests per second (default "1000 10000 50000")
  --no-pair        skip BenchmarkPacing
EOF2
}

rounds=3 duration=5 rates="1000 10000 50000" pair=1 pair_count=2
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) rounds=1 duration=3 pair_count=1 ;;
	--rounds) rounds=$2; shift ;;
	--duration) duration=$2; shift ;;
	--rates) rates=$2; shift ;;
	--no-pair) pair=0 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "pacing.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "pacing.sh: $*" >&2; exit 1; }
for v in "$rounds" "$duration" $rates; do
	[[ $v =~ ^[1-9][0-9]*$ ]] || die "not a positive whole number: $v"
done

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need taskset util-linux
[ "$pair" = 0 ] || tools_need nginx nginx
tools_install pacing.sh
command -v go >/dev/null || die "go is needed to build benchq, the target and vegeta"
tools_pin pacing.sh "the target and the clients"
# The pair pins its nginx to CPU 1 and expects the client on CPU 0; the
# second half does the same.
if [ "$(nproc)" -ge 2 ]; then server_cpu=1 client_cpu=0; fi

benchq_build arrivals
vegeta=$(command -v vegeta || true)
if [ -z "$vegeta" ]; then
	echo "pacing.sh: installing vegeta v12.13.0" >&2
	GOBIN="$work/bin" go install github.com/tsenart/vegeta/v12@v12.13.0 >&2
	vegeta=$work/bin/vegeta
fi

# --- the pair ----------------------------------------------------------------

if [ "$pair" = 1 ]; then
	echo "pacing.sh: BenchmarkPacing, $pair_count runs of each row" >&2
	(cd "$repo" && in_bg taskset -c "$client_cpu" go test ./internal/loadgen/ -run '^$' \
		-bench '^BenchmarkPacing$' -benchtime 3x -count "$pair_count" -timeout 20m) | tee "$work/pair.txt" >&2
fi

# --- both tools, seen from the target ------------------------------------------

# run_one TOOL RATE OUT: a fresh target, TOOL at RATE for DURATION seconds,
# the target's arrivals in OUT; benchq's own report in OUT.report.
run_one() {
	local tool=$1 rate=$2 out=$3 addr n
	n=$((rate * duration))
	coproc TARGET { exec taskset -c "$server_cpu" "$work/arrivals" serve -out "$out" -max $((n + 1000)) -for 10m; }
	local tpid=$TARGET_PID
	pids+=("$tpid")
	read -r addr <&"${TARGET[0]}" || die "arrivals did not start"
	local url="http://$addr/"
	case $tool in
	# -t as vegeta's -duration: a tool that falls behind stops at the
	# same time, its unsent requests missing for both alike.
	benchq) in_bg timeout $((duration * 4 + 30)) taskset -c "$client_cpu" "$work/benchq" ab -q -k -c 64 \
		--rate "$rate" -t "$duration" -n "$n" "$url" >"$out.report" 2>"$work/err" ||
		{ tail -3 "$work/err" >&2; die "benchq ab failed"; } ;;
	# The target list goes in a file: a command run in the background
	# (in_bg) by a shell without job control reads /dev/null, not the pipe.
	vegeta) echo "GET $url" >"$work/targets"
		# 64 workers at most, as benchq gets -c 64: vegeta's default adds
		# workers, each with a connection of its own, whenever one is
		# late, and against this one-core target at 10k req/s that grew to
		# thousands of connections whose SYNs the listen queue dropped,
		# and the run collapsed (5 % of its requests sent, seconds late).
		in_bg timeout $((duration * 4 + 30)) taskset -c "$client_cpu" "$vegeta" attack -targets "$work/targets" \
		-rate "$rate/1s" -duration "${duration}s" -keepalive=true -workers 64 -max-workers 64 >/dev/null 2>"$work/err" ||
		{ tail -3 "$work/err" >&2; die "vegeta failed"; } ;;
	esac
	kill -TERM "$tpid"
	wait "$tpid" 2>/dev/null || true
}

rows="$work/rows"
: >"$rows"
for round in $(seq "$rounds"); do
	for rate in $rates; do
		order="benchq vegeta"
		[ $(((round + rate / 1000) % 2)) = 0 ] && order="vegeta benchq"
		for tool in $order; do
			echo "pacing.sh: round $round/$rounds, $rate req/s, $tool (${duration}s)" >&2
			out="$work/arr-$tool-$rate-$round"
			run_one "$tool" "$rate" "$out"
			read -r n p50 p99 mx < <("$work/arrivals" lag -rate "$rate" "$out")
			self="-"
			[ "$tool" = benchq ] && self=$(awk '/^Send lag \(ms\):/ { print $5, $9 }' "$out.report" | tr -d ',' | awk '{ printf "%.0f/%.0f", $1 * 1000, $2 * 1000 }')
			echo "$tool|$rate|$round|$n|$p50|$p99|$mx|$self" >>"$rows"
		done
	done
done

# --- report ------------------------------------------------------------------

echo
echo "pacing.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$pair" = 1 ]; then
	echo
	echo "BenchmarkPacing (the engine's own send lag, nginx on CPU $server_cpu):"
	grep '^BenchmarkPacing' "$work/pair.txt" | sed 's/^/  /'
fi
echo
echo "Send-time error at the target (arrival - its slot, from the best-timed arrival), µs,"
echo "median over $rounds round(s) of ${duration}s; sent% = arrivals / the schedule's requests;"
echo "benchq self = its own send lag p50/p99 (open_model.send_lag_ms):"
awk -F'|' '
	function median(list,   v, k, i, j, x) {
		k = split(list, v, " ")
		for (i = 2; i <= k; i++) { x = v[i] + 0; for (j = i - 1; j >= 1 && v[j] + 0 > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
		return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
	}
	{
		key = $1 "|" $2
		if (!($2 in seen)) { seen[$2] = 1; order[++nr] = $2 }
		p50[key] = p50[key] " " $5; p99[key] = p99[key] " " $6; n[key] = n[key] " " $4
		if ($8 != "-") self[key] = $8
	}
	END {
		printf "%-8s %7s %9s %6s %10s %10s %13s\n", "tool", "rate", "arrived", "sent%", "p50 µs", "p99 µs", "benchq self"
		for (i = 1; i <= nr; i++) {
			r = order[i]
			for (t = 1; t <= 2; t++) {
				tool = t == 1 ? "benchq" : "vegeta"; key = tool "|" r
				printf "%-8s %7s %9d %6.1f %10.1f %10.1f %13s\n", tool, r, median(n[key]), 100 * median(n[key]) / (r * dur),
					median(p50[key]), median(p99[key]), (key in self) ? self[key] : "-"
			}
		}
		print ""
		printf "%7s %17s %17s\n", "rate", "p50 benchq/vegeta", "p99 benchq/vegeta"
		for (i = 1; i <= nr; i++) {
			r = order[i]; b = "benchq|" r; v = "vegeta|" r
			q50 = median(p50[v]) > 0 ? median(p50[b]) / median(p50[v]) : 0
			q99 = median(p99[v]) > 0 ? median(p99[b]) / median(p99[v]) : 0
			printf "%7s %17.2f %17.2f\n", r, q50, q99
		}
	}' dur="$duration" "$rows"
