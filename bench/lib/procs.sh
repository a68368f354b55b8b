# procs.sh: the process handling the bench scripts share. Source it after
# bench/lib/servers.sh and after setting work (the script's temp
# directory); it sets pids (processes to stop at exit, appended by the
# script), child (the command in_bg runs now) and the traps that stop
# them all and remove work on exit, SIGINT or SIGTERM.
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
