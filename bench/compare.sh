#!/usr/bin/env bash
# compare.sh: wrk, ab, hey and `benchq ab` against the same local nginx.
#
# nginx (one worker) is pinned to CPU 0 and every client to CPU 1, so each
# client's cost is measured on a core of its own. For every client the
# script records requests completed, wall time, user+sys CPU seconds and
# peak RSS (/usr/bin/time), and prints requests per client CPU-second
# side by side, as a ratio to wrk (keep-alive) or ab (no keep-alive). A last
# table shows benchq's peak RSS at two request counts: its latency
# histograms must not grow with -n.
#
# Only 127.0.0.1 is ever loaded; every run is bounded in requests or time.
# Default settings take about 4 minutes; --quick about one.
#
# Usage: bench/compare.sh [--quick] [--requests N] [--ka-requests N]
#                         [--duration S] [--port P] [--files "a b"]
set -euo pipefail

usage() {
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --quick           one file, fewer requests, shorter wrk runs
  --requests N      requests per no-keep-alive run (default 20000)
  --ka-requests N   requests per keep-alive run (default 50000)
  --duration S      seconds per wrk run (default 5)
  --port P          nginx port on 127.0.0.1 (default 18480)
  --files "F ..."   files to load, among test.jpg big.html small.html
EOF
}

quick=0
requests=20000
ka_requests=50000
duration=5
port=18480
files="test.jpg big.html small.html"
mem_small=100000
mem_large=1000000
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--requests) requests=$2; shift ;;
	--ka-requests) ka_requests=$2; shift ;;
	--duration) duration=$2; shift ;;
	--port) port=$2; shift ;;
	--files) files=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "compare.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
if [ "$quick" = 1 ]; then
	requests=5000 ka_requests=30000 duration=2 files="test.jpg"
	mem_small=20000 mem_large=200000
fi
concurrency=50
url_base="http://127.0.0.1:${port}"

# --- tools -------------------------------------------------------------------

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need nginx nginx
tools_need ab apache2-utils
tools_need wrk wrk
tools_need hey hey
tools_need /usr/bin/time time
tools_need taskset util-linux
tools_need curl curl
tools_install compare.sh
command -v go >/dev/null || { echo "compare.sh: go is needed to build benchq" >&2; exit 1; }

tools_pin compare.sh "nginx and the clients"

# --- nginx and benchq -------------------------------------------------------

servers_init "$work"
# The seed write-ups' files: a 25 600-byte image, 49 128- and 7 638-byte
# HTML; the larger page has always been big.html here.
servers_seed_files "$work/www"
cp "$work/www/test.html" "$work/www/big.html"
servers_start_nginx "$port" "$server_cpu" "$work/www" 'sendfile on; keepalive_requests 10000000;'
servers_wait "$url_base/test.jpg" nginx || exit 1

benchq_build

# --- measurement -------------------------------------------------------------

# completed TOOL: requests the last run completed, from its stdout.
completed() {
	case $1 in
	wrk) awk '/ requests in / { print $1 }' "$work/out" ;;
	hey) awk '/^  \[[0-9]+\]/ { n += $2 } END { print n + 0 }' "$work/out" ;;
	*) awk -F: '/^Complete requests:/ { gsub(/ /, "", $2); print $2 }' "$work/out" ;;
	esac
}

rows=()
# run CLIENT MODE FILE CMD...: measures CMD (see measure in lib/procs.sh)
# and appends a row; a client that failed keeps its row, with what it
# completed.
run() {
	local n
	measure "$1" "${@:4}" || true
	n=$(completed "$1")
	rows+=("$1|$2|$3|${n:-0}|$wall|$cpu|$rss_kib")
}

run_keepalive() { # file
	local u="$url_base/$1"
	run wrk keep-alive "$1" wrk -t1 -c"$concurrency" -d"${duration}s" "$u"
	run ab keep-alive "$1" ab -q -k -c"$concurrency" -n"$ka_requests" "$u"
	run hey keep-alive "$1" hey -c "$concurrency" -n "$ka_requests" "$u"
	run benchq keep-alive "$1" "$work/benchq" ab -q -k -c"$concurrency" -n"$ka_requests" "$u"
}

run_close() { # file
	local u="$url_base/$1"
	run wrk close "$1" wrk -t1 -c"$concurrency" -d"${duration}s" -H 'Connection: close' "$u"
	run ab close "$1" ab -q -c"$concurrency" -n"$requests" "$u"
	run hey close "$1" hey -disable-keepalive -c "$concurrency" -n "$requests" "$u"
	run benchq close "$1" "$work/benchq" ab -q -c"$concurrency" -n"$requests" "$u"
}

for f in $files; do
	echo "compare.sh: $f: keep-alive" >&2
	run_keepalive "$f"
	echo "compare.sh: $f: no keep-alive" >&2
	run_close "$f"
done

echo "compare.sh: memory: benchq ab -k -n $mem_small and -n $mem_large" >&2
measure benchq-mem "$work/benchq" ab -q -k -c"$concurrency" -n"$mem_small" "$url_base/small.html" || true
mem_small_kib=$rss_kib mem_small_done=$(completed benchq)
measure benchq-mem "$work/benchq" ab -q -k -c"$concurrency" -n"$mem_large" "$url_base/small.html" || true
mem_large_kib=$rss_kib mem_large_done=$(completed benchq)

# --- report ------------------------------------------------------------------

printf '%s\n' "${rows[@]}" | awk -F'|' '
	function perCPU(n, c) { return c > 0 ? n / c : 0 }
	{
		client[NR] = $1; mode[NR] = $2; file[NR] = $3; n[NR] = $4
		wall[NR] = $5; cpu[NR] = $6; rss[NR] = $7
		if (($2 == "keep-alive" && $1 == "wrk") || ($2 == "close" && $1 == "ab"))
			base[$2 "|" $3] = perCPU($4, $6)
	}
	END {
		printf "%-7s %-10s %-11s %9s %7s %10s %7s %12s %8s %7s\n", "client", "mode", "file",
			"requests", "wall s", "req/s", "CPU-s", "req/CPU-s", "RSS MiB", "ratio"
		for (i = 1; i <= NR; i++) {
			r = perCPU(n[i], cpu[i]); b = base[mode[i] "|" file[i]]
			printf "%-7s %-10s %-11s %9d %7.2f %10.0f %7.2f %12.0f %8.1f %7s\n", client[i], mode[i],
				file[i], n[i], wall[i], (wall[i] > 0 ? n[i] / wall[i] : 0), cpu[i], r, rss[i] / 1024,
				(b > 0 ? sprintf("%.2f", r / b) : "-")
		}
	}'
echo
echo "ratio: requests per client CPU-second relative to wrk (keep-alive) or ab (close)"
echo
awk -v s="$mem_small" -v l="$mem_large" -v a="$mem_small_kib" -v b="$mem_large_kib" \
	-v da="$mem_small_done" -v db="$mem_large_done" 'BEGIN {
	printf "%-30s %9s %9s\n", "benchq ab -k -c50 (small.html)", "requests", "RSS MiB"
	printf "%-30s %9d %9.1f\n", "-n " s, da, a / 1024
	printf "%-30s %9d %9.1f\n", "-n " l, db, b / 1024
	printf "%-30s %9s %9.1f\n", "growth", "", (b - a) / 1024
}'
