#!/usr/bin/env bash
# timeline.sh: what recording a run's timeline costs the client, in one
# sitting: the go test -bench pair (the same run with the timeline and
# without) and `benchq ab` beside wrk on the same pinned nginx.
#
# The pair is internal/loadgen's BenchmarkTimeline: the engine against
# nginx, client CPU per completed request (less the time spent spinning on
# reads), timeline on and off, COUNT times each, compared with benchstat.
# Then wrk and `benchq ab` (which always records the timeline) take turns,
# ROUNDS times each, keep-alive, concurrency 8, DURATION seconds, against
# one nginx worker serving a 7 638-byte page; each run's user+sys CPU per
# completed request is measured with /usr/bin/time, and the script prints
# the medians and benchq's ratio to wrk.
#
# nginx is pinned to CPU 1 and the clients to CPU 0 (the pair pins its own
# nginx the same way). Only 127.0.0.1 is ever loaded; every run is bounded
# in time. Default settings take about 4 minutes; --quick about 1.
#
# Usage: bench/timeline.sh [--quick] [--count N] [--rounds N] [--duration S]
set -euo pipefail

usage() {
	sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --quick        --count 3 --rounds 2 --duration 3
  --count N      runs of each half of the pair (default 6)
  --rounds N     runs of wrk and of benchq each (default 4)
  --duration S   seconds per wrk and benchq run (default 8)
EOF
}

count=6 rounds=4 duration=8
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) count=3 rounds=2 duration=3 ;;
	--count) count=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--duration) duration=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "timeline.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need nginx nginx
tools_need wrk wrk
tools_need /usr/bin/time time
tools_need taskset util-linux
tools_need curl curl
tools_install timeline.sh
command -v go >/dev/null || { echo "timeline.sh: go is needed to build benchq" >&2; exit 1; }
tools_pin timeline.sh "nginx and the clients"
# The pair pins its nginx to CPU 1 and expects the client on CPU 0; the
# second half does the same so both halves measure the same placement.
if [ "$(nproc)" -ge 2 ]; then server_cpu=1 client_cpu=0; fi

# --- the pair ----------------------------------------------------------------

echo "timeline.sh: BenchmarkTimeline, $count runs each (timeline on, off)" >&2
(cd "$repo" && in_bg taskset -c "$client_cpu" go test ./internal/loadgen/ -run '^$' \
	-bench '^BenchmarkTimeline$' -count "$count" -timeout 20m) | tee "$work/pair.txt" >&2
(cd "$repo" && go run golang.org/x/perf/cmd/benchstat -col /timeline "$work/pair.txt") >"$work/pair.stat" 2>&1 || true

# The medians of cpu-ns/req, on and off, straight from the runs.
pair_median() { # on|off
	awk -v want="timeline=$1" '$1 ~ want { for (i = 2; i < NF; i++) if ($(i + 1) == "cpu-ns/req") print $i }' "$work/pair.txt" |
		sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
on=$(pair_median on)
off=$(pair_median off)

# --- benchq ab beside wrk --------------------------------------------------------

servers_init "$work/srv"
servers_seed_files "$work/www"
port=$(servers_free_port)
servers_start_nginx "$port" "$server_cpu" "$work/www" "sendfile on; keepalive_requests 10000000;"
url="http://127.0.0.1:$port/small.html"
servers_wait "$url" nginx
benchq_build

wrk_ns=() benchq_ns=()
for r in $(seq "$rounds"); do
	echo "timeline.sh: round $r of $rounds: wrk, benchq ab (${duration}s each)" >&2
	# measure (lib/procs.sh) sets cpu, user + sys seconds.
	measure wrk wrk -t1 -c8 -d"${duration}s" "$url" || exit 1
	n=$(awk '/ requests in / { print $1 }' "$work/out")
	wrk_ns+=("$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.0f", c * 1e9 / n }')")
	measure "benchq ab" "$work/benchq" ab -q -k -c8 -t"$duration" -n 100000000 "$url" || exit 1
	n=$(awk -F: '/^Complete requests:/ { gsub(/ /, "", $2); print $2 }' "$work/out")
	benchq_ns+=("$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.0f", c * 1e9 / n }')")
done

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wrk_med=$(median "${wrk_ns[@]}")
benchq_med=$(median "${benchq_ns[@]}")

# --- report ------------------------------------------------------------------

echo
echo "The pair (engine, client CPU per request, $count runs each):"
sed 's/^/  /' "$work/pair.stat"
awk -v on="$on" -v off="$off" 'BEGIN { printf "  median: timeline on %.0f ns, off %.0f ns: on/off = %.4f\n", on, off, on / off }'
echo
echo "Client CPU per request against nginx, keep-alive, c = 8 ($rounds runs each, ${duration}s):"
echo "  wrk:       ${wrk_ns[*]} ns (median $wrk_med)"
echo "  benchq ab: ${benchq_ns[*]} ns (median $benchq_med)"
awk -v b="$benchq_med" -v w="$wrk_med" 'BEGIN { printf "  benchq ab (timeline recorded) / wrk = %.3f\n", b / w }'
