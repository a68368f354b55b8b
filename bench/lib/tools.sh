# shellcheck shell=bash
# tools.sh: what a bench script needs before it starts: the Debian packages
# of its tools, and the CPUs the target and the client are pinned to.
# Source it, then:
#
#   tools_need CHECK PKG    CHECK is a command on PATH, or an absolute path
#                           that must be executable; PKG installs it
#   tools_install NAME      apt-get installs every PKG whose CHECK failed
#                           (through sudo unless root); NAME is the script's
#   tools_pin NAME WHO      sets server_cpu=0 client_cpu=1, or both 0 on a
#                           one-CPU machine, saying that WHO share CPU 0

TOOLS_MISSING=()

tools_need() { # check pkg
	case $1 in
	/*) [ -x "$1" ] ;;
	*) command -v "$1" >/dev/null ;;
	esac || TOOLS_MISSING+=("$2")
}

tools_install() { # name
	[ ${#TOOLS_MISSING[@]} -gt 0 ] || return 0
	echo "$1: installing ${TOOLS_MISSING[*]}" >&2
	local sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo apt-get install -y "${TOOLS_MISSING[@]}" >&2
}

tools_pin() { # name who
	# shellcheck disable=SC2034 # read by the sourcing script
	server_cpu=0 client_cpu=1
	if [ "$(nproc)" -lt 2 ]; then
		echo "$1: fewer than 2 CPUs: $2 share CPU 0" >&2
		# shellcheck disable=SC2034
		client_cpu=0
	fi
}
