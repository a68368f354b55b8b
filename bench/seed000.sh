#!/usr/bin/env bash
# seed000.sh: seed 000 (Apache 2.4 vs lighttpd serving a 25 600-byte image)
# run as one job on the all-in-one benchq and by hand with ab, in the same
# sitting, and compared cell by cell in a Markdown table.
#
# apache2 and lighttpd (bench/lib/servers.sh, as examples/run-seeds.sh
# serves them) listen on free 127.0.0.1 ports pinned to CPU 0; ab and the
# all-in-one benchq run pinned to CPU 1. The job is examples/seed000-image.json
# with its targets moved to those ports, --repeats repeats and ab's
# request (request.http_version "1.0": the bytes ab sends, so both answer
# the same request). ab runs --repeats repeats of the same cells in the
# job's order (for each repeat, each concurrency, each request count:
# apache then lighttpd), then the job runs, then ab runs --repeats more.
#
# Per cell (n, c) the table gives ab's mean req/s and min-max over the
# repeats per server, the job's, the job/ab ratio, ab's per-repeat range of
# "lighttpd vs apache" and the job's figure for it. A cell passes when both
# job/ab ratios are within 10 % of 1 and the job's "+x %" lies inside ab's
# range. The script exits 1 if a cell fails.
#
# The seed measured its servers. On a 2-core machine one client core is
# often slower than the server's core, and then ab and the job both
# measure their own limit (the job flags such points client_saturated).
# --server-cpu PCT caps the servers at PCT % of their CPU (a cgroup CFS
# quota; root), so that the servers are the bottleneck as in the seed.
#
# Only 127.0.0.1 is ever loaded; every run is bounded by its request count
# and a timeout. About 2 minutes at the defaults on a 2-core machine.
#
# Usage: bench/seed000.sh [--repeats N] [--out FILE] [--requests 100,1000,10000]
#                         [--concurrency 5,50,100] [--job-timeout S]
#                         [--server-cpu PCT]
set -euo pipefail

usage() {
	sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'
	cat <<'EOF'

  --repeats N          repeats of every cell, by ab and in the job (default 3)
  --out FILE           the Markdown table (default docs/examples/seed000-vs-ab.md)
  --requests LIST      request counts, comma-separated (default: the seed's)
  --concurrency LIST   concurrency levels, comma-separated (default: the seed's)
  --job-timeout S      longest wait for the job (default 900)
  --server-cpu PCT     cap the servers at PCT % of one CPU (default: no cap)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
repeats=3
out="$repo/docs/examples/seed000-vs-ab.md"
requests=""
concurrency=""
job_timeout=900
server_cpu_pct=""
args="$*"
while [ $# -gt 0 ]; do
	case "$1" in
	--repeats) repeats=$2; shift ;;
	--out) out=$2; shift ;;
	--requests) requests=$2; shift ;;
	--concurrency) concurrency=$2; shift ;;
	--job-timeout) job_timeout=$2; shift ;;
	--server-cpu) server_cpu_pct=$2; shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "seed000.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
die() { echo "seed000.sh: $*" >&2; exit 1; }
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
is_count "$repeats" || die "--repeats: not a positive whole number: $repeats"
is_count "$job_timeout" || die "--job-timeout: not a positive whole number: $job_timeout"
[ -z "$server_cpu_pct" ] || { is_count "$server_cpu_pct" && [ "$server_cpu_pct" -le 100 ]; } ||
	die "--server-cpu: not a percentage from 1 to 100: $server_cpu_pct"

# --- tools -------------------------------------------------------------------

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
. "$(dirname "$0")/lib/setup.sh"
tools_need ab apache2-utils
tools_need /usr/sbin/apache2 apache2
tools_need /usr/sbin/lighttpd lighttpd
tools_need jq jq
tools_need curl curl
tools_need taskset util-linux
tools_install seed000.sh
command -v go >/dev/null || die "go is needed to build benchq"

tools_pin seed000.sh "servers and clients"

# The seed's cells, unless overridden: the spec is the one place they live.
seed_spec="$repo/examples/seed000-image.json"
[ -n "$requests" ] || requests=$(jq -r '.sweep.requests | join(",")' "$seed_spec")
[ -n "$concurrency" ] || concurrency=$(jq -r '.sweep.concurrency | join(",")' "$seed_spec")
IFS=, read -r -a n_list <<<"$requests"
IFS=, read -r -a c_list <<<"$concurrency"
for v in "${n_list[@]}" "${c_list[@]}"; do is_count "$v" || die "not a positive whole number: $v"; done
for n in "${n_list[@]}"; do
	for c in "${c_list[@]}"; do
		[ "$n" -ge "$c" ] || die "n=$n < c=$c: ab refuses a concurrency above the request count"
	done
done
mapfile -t server_names < <(jq -r '.targets[].name' "$seed_spec")
[ "${server_names[*]}" = "apache lighttpd" ] || die "$seed_spec: want targets apache, lighttpd; have ${server_names[*]}"
[ "$(jq -r .baseline "$seed_spec")" = apache ] || die "$seed_spec: want baseline apache"

fds=$(ulimit -Hn)
[ "$fds" = unlimited ] || [ "$fds" -gt 65536 ] && fds=65536
ulimit -Sn "$fds"

# --- processes ---------------------------------------------------------------

servers_init "$work"
servers_seed_files "$work/www"
[ -z "$server_cpu_pct" ] || servers_cap_cpu "$server_cpu_pct" || exit 1
declare -A url
apache_port=$(servers_free_port)
servers_start_apache "$apache_port" "$server_cpu" "$work/www"
url[apache]="http://127.0.0.1:$apache_port/test.jpg"
lighttpd_port=$(servers_free_port)
servers_start_lighttpd "$lighttpd_port" "$server_cpu" "$work/www"
url[lighttpd]="http://127.0.0.1:$lighttpd_port/test.jpg"
servers_wait "${url[apache]}" apache || exit 1
servers_wait "${url[lighttpd]}" lighttpd || exit 1

benchq_build
api_port=$(servers_free_port)
api="http://127.0.0.1:$api_port"
# Ephemeral: a scratch service, not the data directory of one a developer runs.
benchq_start benchq.log "$client_cpu" BENCHQ_EPHEMERAL=true BENCHQ_ADDR="127.0.0.1:$api_port"
benchq_ready "$api" benchq.log || exit 1

# --- ab, in the job's order ----------------------------------------------------

ab_rows="$work/ab"
: >"$ab_rows"
# ab_pass FROM TO: ab's repeats FROM..TO of every cell, in the job's order.
# Half of ab's repeats run before the job and half after, so drift of the
# servers over the sitting (apache's spare-process management moves its
# req/s by ±15 % from minute to minute here) hits ab and the job alike.
ab_pass() {
	local rep c n s
	for rep in $(seq "$1" "$2"); do
		for c in "${c_list[@]}"; do
			for n in "${n_list[@]}"; do
				for s in apache lighttpd; do
					echo "seed000.sh: ab repeat $rep/$ab_repeats c=$c n=$n $s" >&2
					if ! in_bg timeout 300 taskset -c "$client_cpu" ab -q -c "$c" -n "$n" "${url[$s]}" >"$work/out" 2>"$work/err"; then
						echo "seed000.sh: ab -c $c -n $n ${url[$s]} failed:" >&2
						tail -3 "$work/err" >&2
					fi
					rps=$(awk '/^Requests per second:/ {print $4}' "$work/out")
					failed=$(awk '/^Failed requests:/ {print $3}' "$work/out")
					echo "$rep|$n|$c|$s|${rps:-0}|${failed:-0}" >>"$ab_rows"
				done
			done
		done
	done
}
ab_repeats=$((2 * repeats))
ab_pass 1 "$repeats"

# --- the job -------------------------------------------------------------------

jq --arg a "${url[apache]}" --arg l "${url[lighttpd]}" --argjson r "$repeats" \
	--argjson n "[$requests]" --argjson c "[$concurrency]" '
	.targets |= map(.url = (if .name == "apache" then $a else $l end))
	| .sweep.repeats = $r | .sweep.requests = $n | .sweep.concurrency = $c
	| .sweep.order = "interleaved"
	| .request.http_version = "1.0"
	| .labels.compared_with = "ab"' "$seed_spec" >"$work/job.json"
loc=$(benchq_submit "$api" @"$work/job.json") || exit 1
echo "seed000.sh: job $api$loc" >&2
benchq_wait_job "$api$loc" "$job_timeout" "$benchq_pid" || { tail -20 "$work/benchq.log" >&2; exit 1; }
[ "$job_status" = succeeded ] || die "job $job_status"
benchq_results "$api$loc" || exit 1
ab_pass $((repeats + 1)) "$ab_repeats"
jq -r '.analysis.points[] | [.point.requests, .point.concurrency, .point.target,
	.rps.mean, .rps.min, .rps.max, (.comparison.rps_pct // "-"), .failed_ratio.max,
	(.client_saturated // false)] | join("|")' \
	"$work/results.json" >"$work/job"

# --- the table -------------------------------------------------------------------

mkdir -p "$(dirname "$out")"
status=0
{
	echo "# Seed 000: benchq's job against ab, same sitting"
	echo
	echo "Generated by \`bench/seed000.sh${args:+ $args}\`."
	echo
	echo "- Date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- Machine: $(uname -srm), $(nproc) CPUs, $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
	echo "- Pinning: apache2 and lighttpd on CPU $server_cpu${server_cpu_pct:+, capped at $server_cpu_pct % of it (a cgroup CPU quota: the servers are the bottleneck, not the clients)}; ab and the all-in-one benchq (API, worker, embedded Redis) on CPU $client_cpu; all on 127.0.0.1"
	echo "- Versions: ab $(ab -V | awk 'NR == 1 {print $5}'); $(/usr/sbin/apache2 -v | awk -F': ' '/^Server version/ {print $2}'); $(/usr/sbin/lighttpd -v | awk '{print $1}'); benchq $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown), $(go version | awk '{print $3}')"
	echo "- Files: a 25 600-byte test.jpg; no keep-alive (as the seed's ab)"
	echo "- Order: ab ran $repeats repeats of every cell (each repeat, each c, each n: apache then lighttpd), then one job ran the same cells in the same order (\`sweep.order\`: interleaved, $repeats repeats), then ab ran $repeats more repeats; ab's figures are over all $ab_repeats"
	echo
	echo "job/ab must be within 10 % of 1 for both servers, and the job's lighttpd-vs-apache difference inside ab's range over the repeats."
	echo
	echo "| n | c | apache ab req/s (min–max) | apache job | job/ab | lighttpd ab req/s (min–max) | lighttpd job | job/ab | lighttpd vs apache, ab (range) | job | verdict |"
	echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
	awk -F'|' -v ns="$requests" -v cs="$concurrency" '
		FILENAME == ARGV[1] { # ab: rep|n|c|server|rps|failed
			k = $2 "|" $3 "|" $4
			sum[k] += $5; cnt[k]++
			if (!(k in mn) || $5 < mn[k]) mn[k] = $5
			if (!(k in mx) || $5 > mx[k]) mx[k] = $5
			if ($6 > 0) abfail[$2 "|" $3] = 1
			r[$1 "|" $2 "|" $3 "|" $4] = $5; reps[$1] = 1
			next
		}
		{ # job: n|c|target|mean|min|max|rps_pct|failed_ratio|client_saturated
			k = $1 "|" $2 "|" $3
			jm[k] = $4; jmin[k] = $5; jmax[k] = $6; jsat[k] = $9 == "true" ? " †" : ""
			if ($3 == "lighttpd") jpct[$1 "|" $2] = $7
			if ($8 > 0) jfail[$1 "|" $2] = 1
		}
		function pct(x) { return sprintf("%+.2f %%", x) }
		END {
			nn = split(ns, N, ","); nc = split(cs, C, ",")
			for (i = 1; i <= nn; i++) for (j = 1; j <= nc; j++) {
				cell = N[i] "|" C[j]; ok = 1
				line = "| " N[i] " | " C[j]
				for (s = 1; s <= 2; s++) {
					srv = s == 1 ? "apache" : "lighttpd"; k = cell "|" srv
					abm = cnt[k] ? sum[k] / cnt[k] : 0
					ratio = abm > 0 && (k in jm) ? jm[k] / abm : 0
					if (ratio < 0.9 || ratio > 1.1) ok = 0
					line = line sprintf(" | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f)%s | %.3f", abm, mn[k], mx[k], jm[k], jmin[k], jmax[k], jsat[k], ratio)
				}
				lo = ""; hi = ""
				for (rep in reps) {
					a = r[rep "|" cell "|apache"]; l = r[rep "|" cell "|lighttpd"]
					if (a <= 0) continue
					p = (l - a) / a * 100
					if (lo == "" || p < lo) lo = p
					if (hi == "" || p > hi) hi = p
				}
				jp = jpct[cell]
				if (lo == "" || jp == "" || jp == "-" || jp + 0 < lo || jp + 0 > hi) ok = 0
				note = ""
				if (cell in abfail) note = note ", ab had failed requests"
				if (cell in jfail) note = note ", the job had failed requests"
				line = line sprintf(" | %s … %s | %s | %s%s |", lo == "" ? "-" : pct(lo), hi == "" ? "-" : pct(hi),
					(jp == "" || jp == "-") ? "-" : pct(jp), ok ? "PASS" : "FAIL", note)
				print line
				if (!ok) failed = 1
			}
			exit failed
		}' "$ab_rows" "$work/job" || status=1
	echo
	echo "ab req/s: mean over the repeats of ab's \"Requests per second\", min–max in brackets; job: the job's analysis (\`rps\` mean, min, max). lighttpd vs apache: (lighttpd − apache) / apache per repeat for ab, the job's \`comparison.rps_pct\` (difference of the means). † the job flagged the point \`client_saturated\`: its load generator was short of CPU, so the number is the client's limit, not the server's (ab has no such flag; where ab is the slower client, job/ab > 1 says so). Job \`$(jq -r .job.id "$work/results.json")\`."
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
[ "$status" = 0 ] || echo "seed000.sh: FAIL: some cells differ from ab beyond the thresholds" >&2
exit "$status"
