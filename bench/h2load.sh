#!/usr/bin/env bash
# h2load.sh: h2load (nghttp2-client) and `benchq ab --http2` against the
# same local nginx speaking HTTP/2, over TLS (ALPN h2, a self-signed
# certificate made for the run) and as h2c (prior knowledge).
#
# nginx (one worker) is pinned to CPU 0 and both clients to CPU 1, as in
# bench/compare.sh. Every round runs h2load then benchq with the same file,
# -n, -c and -m, and the rounds alternate so drift hits both alike. For
# each run the script records requests succeeded, wall time and user+sys
# CPU seconds (/usr/bin/time), and prints requests per client CPU-second
# side by side with benchq's ratio to h2load's.
#
# Only 127.0.0.1 is ever loaded; every run is bounded in requests.
#
# Usage: bench/h2load.sh [--quick] [--requests N] [--rounds R] [-c C] [-m M]
#                        [--port P] [--file F]
set -euo pipefail

usage() {
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --quick          fewer requests and one round
  --requests N     requests per run (default 200000)
  --rounds R       alternated rounds per mode (default 3)
  -c C             connections, h2load's -c (default 10)
  -m M             streams per connection, h2load's -m (default 10)
  --port P         first of two nginx ports on 127.0.0.1 (default 18490)
  --file F         small.html (7 638 bytes, default) or test.jpg (25 600)
EOF
}

requests=200000
rounds=3
conns=10
streams=10
port=18490
file=small.html
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) requests=50000 rounds=1 ;;
	--requests) requests=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	-c) conns=$2; shift ;;
	-m) streams=$2; shift ;;
	--port) port=$2; shift ;;
	--file) file=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "h2load.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
tls_port=$port h2c_port=$((port + 1))

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need nginx nginx
tools_need h2load nghttp2-client
tools_need openssl openssl
tools_need /usr/bin/time time
tools_need taskset util-linux
tools_need curl curl
tools_install h2load.sh
command -v go >/dev/null || { echo "h2load.sh: go is needed to build benchq" >&2; exit 1; }

tools_pin h2load.sh "nginx and the clients"

# --- nginx and benchq -------------------------------------------------------

servers_init "$work"
servers_seed_files "$work/www"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

# nginx before 1.25.1 has no "http2 on": the listen parameter says it, and
# a listen with http2 but without ssl is h2c with prior knowledge. The
# server's own HTTP/1.1 port only says when nginx is up.
plain_port=$(servers_free_port)
servers_start_nginx "$plain_port" "$server_cpu" "$work/www" \
	'sendfile on; keepalive_requests 10000000; http2_max_concurrent_streams 1000;' \
	"listen 127.0.0.1:$tls_port ssl http2 backlog=4096; listen 127.0.0.1:$h2c_port http2 backlog=4096;
        ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;"
servers_wait "http://127.0.0.1:$plain_port/$file" nginx || exit 1
tls_url="https://127.0.0.1:$tls_port/$file"
h2c_url="http://127.0.0.1:$h2c_port/$file"

benchq_build

# --- measurement -------------------------------------------------------------

# succeeded TOOL: requests the last run completed with a 2xx, from stdout.
succeeded() {
	case $1 in
	h2load) awk '/^requests:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^succeeded/) print $i }' "$work/out" ;;
	*) awk -F: '/^Complete requests:/ { gsub(/ /, "", $2); print $2 }' "$work/out" ;;
	esac
}

rows=()
# run CLIENT MODE ROUND CMD...: measures CMD (see measure in lib/procs.sh)
# and appends a row; a client that failed keeps its row, with what it
# completed.
run() {
	local n
	measure "$1" "${@:4}" || true
	n=$(succeeded "$1")
	rows+=("$1|$2|$3|${n:-0}|$wall|$cpu")
}

for round in $(seq "$rounds"); do
	for mode in tls h2c; do
		url=$tls_url
		[ "$mode" = h2c ] && url=$h2c_url
		echo "h2load.sh: round $round: $mode" >&2
		run h2load "$mode" "$round" h2load -n "$requests" -c "$conns" -m "$streams" -t 1 "$url"
		run benchq "$mode" "$round" "$work/benchq" ab -q --http2 -c "$conns" --max-streams "$streams" -n "$requests" "$url"
	done
done

# --- report ------------------------------------------------------------------

echo "h2load.sh: nginx $(nginx -v 2>&1 | sed 's/.*nginx\///'), $(h2load --version 2>&1 | head -1), $file, -n $requests -c $conns -m $streams"
printf '%s\n' "${rows[@]}" | awk -F'|' '
	function perCPU(n, c) { return c > 0 ? n / c : 0 }
	{
		client[NR] = $1; mode[NR] = $2; round[NR] = $3; n[NR] = $4; wall[NR] = $5; cpu[NR] = $6
		if ($1 == "h2load") base[$2 "|" $3] = perCPU($4, $6)
		sum[$1 "|" $2] += perCPU($4, $6); cnt[$1 "|" $2]++
	}
	END {
		printf "%-7s %-5s %5s %9s %7s %10s %7s %12s %7s\n", "client", "mode", "round",
			"requests", "wall s", "req/s", "CPU-s", "req/CPU-s", "ratio"
		for (i = 1; i <= NR; i++) {
			r = perCPU(n[i], cpu[i]); b = base[mode[i] "|" round[i]]
			printf "%-7s %-5s %5s %9d %7.2f %10.0f %7.2f %12.0f %7s\n", client[i], mode[i], round[i],
				n[i], wall[i], (wall[i] > 0 ? n[i] / wall[i] : 0), cpu[i], r,
				(client[i] == "benchq" && b > 0 ? sprintf("%.2f", r / b) : "-")
		}
		print ""
		printf "%-5s %16s %16s %7s\n", "mode", "h2load req/CPU-s", "benchq req/CPU-s", "ratio"
		split("tls h2c", modes, " ")
		for (k = 1; k <= 2; k++) {
			m = modes[k]; h = sum["h2load|" m] / cnt["h2load|" m]; q = sum["benchq|" m] / cnt["benchq|" m]
			printf "%-5s %16.0f %16.0f %7.2f\n", m, h, q, (h > 0 ? q / h : 0)
		}
	}'
echo
echo "ratio: benchq's requests per client CPU-second relative to h2load's (mean over rounds)"
