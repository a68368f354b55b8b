#!/usr/bin/env bash
# run-seeds.sh: the seed write-ups' studies, each one POST to benchq.
#
# Installs Debian's apache2, lighttpd and nginx if missing, serves the seed
# files on loopback (apache 127.0.0.1:18081, lighttpd :18082, nginx :18083,
# all pinned to CPU 0), starts the all-in-one benchq on 127.0.0.1:18080
# pinned to CPU 1, submits every examples/seed*.json, waits for each job and
# writes its Markdown and SVG reports to docs/examples/.
#
# The studies are scaled down by --scale so the whole set takes minutes,
# not the hours the seeds' authors spent (seed 003 alone is 60 runs of 600 s):
# requests are divided by the scale (never below the concurrency), repeats
# capped at --repeats and durations set to --duration. --scale 1 --repeats 0
# --duration 0 runs the studies as written.
#
# Only 127.0.0.1 is ever loaded; every run is bounded in requests or time.
#
# Usage: examples/run-seeds.sh [--scale N] [--repeats N] [--duration S] [--only 000,003]
set -euo pipefail

scale=10
repeats=3
duration=2
only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--scale) scale=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-seeds.sh: unknown option $1" >&2; exit 2 ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/docs/examples"
mkdir -p "$out"

need=()
[ -x /usr/sbin/apache2 ] || need+=(apache2)
[ -x /usr/sbin/lighttpd ] || need+=(lighttpd)
[ -x /usr/sbin/nginx ] || need+=(nginx)
command -v jq >/dev/null || need+=(jq)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$work/apache.pid" ] && kill "$(cat "$work/apache.pid")" 2>/dev/null || true
	[ -f "$work/lighttpd.pid" ] && kill "$(cat "$work/lighttpd.pid")" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# --- the seed files, at the seeds' sizes -------------------------------------
mkdir -p "$work/www" "$work/tmp" "$work/lighttpd-upload"
make_html() { # size path
	{ printf '<html><body>'; head -c $(($1 - 27)) /dev/zero | tr '\0' 'x'; printf '</body></html>\n'; } >"$2"
}
head -c 25600 /dev/urandom >"$work/www/test.jpg" # seed 000: 25 600-byte image
make_html 49128 "$work/www/test.html"            # seed 002: 49 128-byte HTML
make_html 7638 "$work/www/small.html"            # seed 001: 7 638-byte HTML
make_html 61440 "$work/www/static.html"          # seed 003: 60 kB static page
make_html 442 "$work/www/status.html"            # seed 004: 442-byte status page
chmod -R a+rX "$work/www"

# --- servers on CPU 0 ----------------------------------------------------------
cat >"$work/apache.conf" <<EOF
ServerRoot /usr/lib/apache2
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule mime_module modules/mod_mime.so
TypesConfig /etc/mime.types
Listen 127.0.0.1:18081
ServerName 127.0.0.1
PidFile $work/apache.pid
ErrorLog $work/apache-error.log
Mutex file:$work default
DefaultRuntimeDir $work
User www-data
Group www-data
MaxRequestWorkers 400
ServerLimit 16
DocumentRoot $work/www
<Directory $work/www>
    Require all granted
</Directory>
EOF
taskset -c 0 /usr/sbin/apache2 -f "$work/apache.conf" -k start

cat >"$work/lighttpd.conf" <<EOF
server.document-root = "$work/www"
server.bind = "127.0.0.1"
server.port = 18082
server.pid-file = "$work/lighttpd.pid"
server.errorlog = "$work/lighttpd-error.log"
server.upload-dirs = ( "$work/lighttpd-upload" )
server.max-fds = 8192
server.max-connections = 4096
mimetype.assign = ( ".html" => "text/html", ".jpg" => "image/jpeg" )
EOF
taskset -c 0 /usr/sbin/lighttpd -f "$work/lighttpd.conf"

cat >"$work/nginx.conf" <<EOF
daemon off;
worker_processes 1;
user root root;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
worker_rlimit_nofile 65536;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path $work/tmp;
    proxy_temp_path $work/tmp;
    fastcgi_temp_path $work/tmp;
    uwsgi_temp_path $work/tmp;
    scgi_temp_path $work/tmp;
    server { listen 127.0.0.1:18083 backlog=4096; root $work/www; }
}
EOF
taskset -c 0 /usr/sbin/nginx -p "$work" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)

for port in 18081 18082 18083; do
	for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/small.html" && break; sleep 0.1; done
	curl -sf -o /dev/null "http://127.0.0.1:$port/small.html" || { echo "run-seeds.sh: server on :$port did not start" >&2; cat "$work"/*-error.log >&2; exit 1; }
done

# --- benchq on CPU 1 -----------------------------------------------------------
(cd "$root" && go build -o "$work/benchq" ./cmd/benchq)
api=http://127.0.0.1:18080
BENCHQ_ADDR=127.0.0.1:18080 taskset -c 1 "$work/benchq" >"$work/benchq.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do curl -sf -o /dev/null "$api/readyz" && break; sleep 0.1; done

scale_spec() { # spec.json -> scaled spec on stdout
	jq --argjson s "$scale" --argjson r "$repeats" --argjson d "$duration" '
		.sweep as $w
		| (if $w.requests then .sweep.requests |= (map([((. / $s) | ceil), ($w.concurrency | max)] | max) | unique) else . end)
		| (if $w.duration and $d > 0 then .sweep.duration = [($d | tostring) + "s"] else . end)
		| (if $r > 0 and ($w.repeats // 1) > $r then .sweep.repeats = $r else . end)
		| .labels.scaled = "scale \($s), repeats <= \($r), duration \($d)s"' "$1"
}

{
	echo "# Seed studies, run by benchq on this machine"
	echo
	echo "Generated by \`examples/run-seeds.sh --scale $scale --repeats $repeats --duration $duration\` on $(date -u +%Y-%m-%d)."
	echo "Servers (Debian's apache2, lighttpd, nginx) pinned to CPU 0, benchq to CPU 1, all on 127.0.0.1."
	echo
} >"$out/README.md"

for spec in "$root"/examples/seed*.json; do
	name=$(basename "$spec" .json)
	seed=${name#seed}; seed=${seed%%-*}
	if [ -n "$only" ] && [[ ",$only," != *",$seed,"* ]]; then continue; fi
	scale_spec "$spec" >"$work/$name.json"
	if ! loc=$(curl -sS -o "$work/$name.resp" -w '%header{location}' -f -H 'Content-Type: application/json' \
		--data-binary @"$work/$name.json" "$api/v1/jobs"); then
		echo "run-seeds.sh: $name refused:" >&2; cat "$work/$name.resp" >&2; exit 1
	fi
	echo "run-seeds.sh: $name -> $loc" >&2
	until curl -fsS "$api$loc" | grep -Eq '"status":"(succeeded|failed|canceled)"'; do sleep 1; done
	curl -fsS "$api$loc/report?format=markdown" >"$out/$name.md"
	curl -fsS "$api$loc/report?format=svg" >"$out/$name.svg"
	{
		echo "## $(jq -r .name "$spec")"
		echo
		echo "Spec: [\`examples/$name.json\`](../../examples/$name.json), scaled: \`$(jq -c .sweep "$work/$name.json")\`"
		echo
		echo "![$name](./$name.svg)"
		echo
		sed 's/^#/###/' "$out/$name.md"
		echo
	} >>"$out/README.md"
done
echo "run-seeds.sh: reports in $out" >&2
