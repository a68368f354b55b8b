#!/usr/bin/env bash
# run-seeds.sh: the seed write-ups' studies, each one POST to benchq.
#
# Installs Debian's apache2, lighttpd and nginx if missing, serves the seed
# files on loopback (apache 127.0.0.1:18081, lighttpd :18082, nginx :18083)
# and, for seed 003's dynamic pages, a private copy of Debian's DokuWiki on
# apache with mod_php (:18084, OPcache off; :18086, on) and on lighttpd
# with php-cgi over FastCGI (:18085 off, :18087 on), all pinned to CPU 0,
# with Debian's prometheus-node-exporter on :18090 for the servers' CPU 0
# (each of seed 003's runs waits, with sweep.settle, until that CPU is
# quiet: a run's abandoned requests stay queued at a PHP server for
# seconds, which the seed's authors cleared by restarting the server
# between runs); starts the all-in-one benchq on 127.0.0.1:18080
# pinned to CPU 1, submits every examples/seed*.json, waits for each job and
# writes its Markdown, SVG, PNG and HTML reports to docs/examples/.
#
# The studies are scaled down by --scale so the whole set takes minutes,
# not the hours the seeds' authors spent (seed 003 alone is 60 runs of 600 s):
# requests are divided by the scale (never below the concurrency), repeats
# capped at --repeats (0, the default: the seeds' own counts) and durations
# set to --duration. --scale 1 --duration 0 runs the studies as written.
# --only runs just the seeds named and leaves the others' reports as they
# are; docs/examples/README.md is rebuilt from every seed's reports.
#
# Only 127.0.0.1 is ever loaded; every run is bounded in requests or time.
#
# Usage: examples/run-seeds.sh [--scale N] [--repeats N] [--duration S] [--only 000,003]
set -euo pipefail

scale=10
repeats=0
duration=2
only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--scale) scale=$2; shift 2 ;;
	--repeats) repeats=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	-h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
[ -d /usr/share/dokuwiki ] || need+=(dokuwiki)
[ -x /usr/bin/php-cgi ] || need+=(php-cgi)
compgen -G '/usr/lib/apache2/modules/libphp*.so' >/dev/null || need+=(libapache2-mod-php)
command -v prometheus-node-exporter >/dev/null || need+=(prometheus-node-exporter)
command -v jq >/dev/null || need+=(jq)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# shellcheck source-path=SCRIPTDIR/.. source=bench/lib/servers.sh
. "$root/bench/lib/servers.sh"
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	servers_stop
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# --- the seed files, and the servers on CPU 0 ----------------------------------
# The seeds' specs name these ports.
servers_init "$work"
servers_seed_files "$work/www"
servers_start_apache 18081 0 "$work/www"
servers_start_lighttpd 18082 0 "$work/www"
servers_start_nginx 18083 0 "$work/www"
for port in 18081 18082 18083; do
	servers_wait "http://127.0.0.1:$port/small.html" "server on :$port" || exit 1
done
servers_dokuwiki "$work/dokuwiki"
servers_start_apache_php 18084 0 "$work/dokuwiki" off
servers_start_lighttpd_php 18085 0 "$work/dokuwiki" off
servers_start_apache_php 18086 0 "$work/dokuwiki" on
servers_start_lighttpd_php 18087 0 "$work/dokuwiki" on
for port in 18084 18085 18086 18087; do
	servers_wait "http://127.0.0.1:$port/doku.php?id=zeittafel" "DokuWiki on :$port" || exit 1
done
# The servers' CPU, as seed 003 watched it: node_exporter on CPU 1 with
# benchq, so that its own scrapes do not count as the servers'.
taskset -c 1 prometheus-node-exporter --web.listen-address=127.0.0.1:18090 \
	--collector.disable-defaults --collector.cpu --collector.meminfo >"$work/node-exporter.log" 2>&1 &
pids+=($!)
servers_wait http://127.0.0.1:18090/metrics node_exporter || exit 1

# --- benchq on CPU 1 -----------------------------------------------------------
(cd "$root" && go build -o "$work/benchq" ./cmd/benchq)
api=http://127.0.0.1:18080
# Ephemeral: a scratch service, not the data directory of one a developer runs.
BENCHQ_EPHEMERAL=true BENCHQ_ADDR=127.0.0.1:18080 taskset -c 1 "$work/benchq" >"$work/benchq.log" 2>&1 &
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

for spec in "$root"/examples/seed*.json; do
	name=$(basename "$spec" .json)
	seed=${name#seed}; seed=${seed%%-*}
	if [ -n "$only" ] && [[ ",$only," != *",$seed,"* ]]; then continue; fi
	# The spec as submitted stays beside its reports, with how it was made.
	scale_spec "$spec" | jq --arg by "examples/run-seeds.sh --scale $scale --repeats $repeats --duration $duration on $(date -u +%Y-%m-%d)" \
		'.labels.generated_by = $by' >"$out/$name.submitted.json"
	if ! loc=$(curl -sS -o "$work/$name.resp" -w '%header{location}' -f -H 'Content-Type: application/json' \
		--data-binary @"$out/$name.submitted.json" "$api/v1/jobs"); then
		echo "run-seeds.sh: $name refused:" >&2; cat "$work/$name.resp" >&2; exit 1
	fi
	echo "run-seeds.sh: $name -> $loc" >&2
	until curl -fsS "$api$loc" | grep -Eq '"status":"(succeeded|failed|canceled)"'; do sleep 1; done
	curl -fsS "$api$loc/report?format=markdown" >"$out/$name.md"
	curl -fsS "$api$loc/report?format=svg" >"$out/$name.svg"
	curl -fsS "$api$loc/report?format=png" >"$out/$name.png"
	curl -fsS "$api$loc/report?format=html" >"$out/$name.html"
done

# The index, from every seed's reports: those run now and those kept.
{
	echo "# Seed studies, run by benchq on this machine"
	echo
	echo "Made by \`examples/run-seeds.sh\`: servers (Debian's apache2, lighttpd, nginx) pinned to CPU 0, benchq to CPU 1, all on 127.0.0.1."
	echo
	for spec in "$root"/examples/seed*.json; do
		name=$(basename "$spec" .json)
		[ -f "$out/$name.md" ] && [ -f "$out/$name.submitted.json" ] || continue
		echo "## $(jq -r .name "$spec")"
		echo
		echo "Spec: [\`examples/$name.json\`](../../examples/$name.json), submitted as [\`$name.submitted.json\`](./$name.submitted.json) (\`$(jq -r .labels.generated_by "$out/$name.submitted.json")\`): \`$(jq -c .sweep "$out/$name.submitted.json")\`"
		echo
		echo "![$name](./$name.svg)"
		echo
		echo "Also as [PNG](./$name.png) and as one self-contained [HTML report](./$name.html)."
		echo
		sed 's/^#/###/' "$out/$name.md"
		echo
	done
} >"$out/README.md"
echo "run-seeds.sh: reports in $out" >&2
