# shellcheck shell=bash
# setup.sh: what every bench script sets up first. Source it once the
# arguments are read: it sources tools.sh, servers.sh, procs.sh and
# benchq.sh (their functions are described in each), sets repo (this
# checkout) and work (a new directory, /tmp/benchq-NAME.XXXXXX for
# bench/NAME.sh), and procs.sh's traps stop every process started and
# remove work on exit, SIGINT or SIGTERM.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "/tmp/benchq-$(basename "$0" .sh).XXXXXX")
# shellcheck source-path=SCRIPTDIR/lib source-path=SCRIPTDIR source=tools.sh
. "$repo/bench/lib/tools.sh"
# shellcheck source-path=SCRIPTDIR/lib source-path=SCRIPTDIR source=servers.sh
. "$repo/bench/lib/servers.sh"
# shellcheck source-path=SCRIPTDIR/lib source-path=SCRIPTDIR source=procs.sh
. "$repo/bench/lib/procs.sh"
# shellcheck source-path=SCRIPTDIR/lib source-path=SCRIPTDIR source=benchq.sh
. "$repo/bench/lib/benchq.sh"
