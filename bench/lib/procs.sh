# procs.sh: the process handling the bench scripts share. Sourced by
# setup.sh, after servers.sh and after setting work (the script's temp
# directory); it sets pids (processes to stop at exit, appended by the
# script), child (the command in_bg runs now) and the traps that stop
# them all and remove work on exit, SIGINT or SIGTERM. Then:
#
#   in_bg CMD...           CMD, interruptible by a signal (below)
#   procs_stop PID...      stops those processes now and drops them from pids
#   measure NAME CMD...    CMD on the client CPU under /usr/bin/time (below)
# shellcheck shell=bash

pids=()
child="" # the client or wait running now (see in_bg)
cleanup() {
	local pid
	if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; fi
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	servers_stop
	# shellcheck disable=SC2154 # set by the sourcing script
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# in_bg CMD...: runs CMD and waits for it. bash runs a trap only once the
# foreground command has ended; a wait is interrupted at once, so a
# SIGTERM stops the script mid-run, and cleanup ends CMD.
in_bg() {
	local rc=0
	"$@" &
	child=$!
	wait "$child" || rc=$?
	child=""
	return "$rc"
}

# procs_stop PID...: what cleanup does, for some processes before the end.
procs_stop() {
	local pid p keep=()
	for pid in "$@"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "$@"; do wait "$pid" 2>/dev/null || true; done
	for p in "${pids[@]}"; do
		for pid in "$@"; do [ "$p" = "$pid" ] && continue 2; done
		keep+=("$p")
	done
	pids=("${keep[@]}")
}

# measure NAME CMD...: runs CMD pinned to client_cpu (see tools_pin) under
# /usr/bin/time, at most measure_timeout seconds; sets wall (s), cpu (user
# + sys, s) and rss_kib (peak RSS), 0 when time could not report, and
# leaves CMD's stdout in $work/out, its stderr in $work/err. When CMD
# fails it says so with the tail of its stderr and returns CMD's status.
# timeout runs outside time: cleanup's signal to it reaches time and CMD
# too (timeout signals its own process group).
measure_timeout=600
measure() {
	local name=$1 rc=0 user sys
	shift
	: >"$work/time"
	# shellcheck disable=SC2154 # client_cpu is tools_pin's
	in_bg timeout "$measure_timeout" /usr/bin/time -f '%e %U %S %M' -o "$work/time" \
		taskset -c "$client_cpu" "$@" >"$work/out" 2>"$work/err" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "${0##*/}: $name failed:" >&2
		tail -5 "$work/err" >&2
	fi
	# The last line: time prefixes a note when the command failed.
	read -r wall user sys rss_kib < <(tail -n 1 "$work/time") || true
	# shellcheck disable=SC2034 # wall, rss_kib and cpu are read by the sourcing script
	wall=${wall:-0} rss_kib=${rss_kib:-0} cpu=$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN { printf "%.2f", u + s }')
	return "$rc"
}
