# shellcheck shell=bash
# servers.sh: the seed write-ups' files and Debian's apache2, lighttpd and
# nginx serving them on 127.0.0.1, for the scripts under bench/ and
# examples/. Source it, then:
#
#   servers_init DIR                   work directory: configs, logs, pids (made 755)
#   servers_seed_files DIR             the seeds' files, at the seeds' sizes
#   servers_free_port                  prints a loopback port nothing listens on
#   servers_start_apache PORT CPU ROOT
#   servers_start_lighttpd PORT CPU ROOT [EXTRA]
#   servers_start_nginx PORT CPU ROOT [EXTRA]
#   servers_cap_cpu PCT                the servers started after it share PCT % of one CPU
#   servers_wait URL NAME              waits (5 s at most) until URL answers 2xx
#   servers_stop                       stops every server started, waits for each
#
# Every server runs in the foreground of a background job pinned with
# taskset, so its pid is known and servers_stop ends exactly the processes
# started here. EXTRA is appended to lighttpd's configuration or inside
# nginx's http block. Only 127.0.0.1 is ever bound.

SERVERS_WORK=""
SERVERS_PIDS=()
SERVERS_CGROUP=""

# servers_cap_cpu PCT: a server write-up measures servers, so its clients
# must have CPU to spare; on a 2-core machine a client on one core is
# often slower than a server on the other. Capping the servers' CPU (a CFS
# quota on a cgroup of their own: cgroup v2's cpu.max, else v1's cpu
# controller) makes them the bottleneck again. The 10 ms period keeps the
# throttling's stalls short. Needs root; servers_stop removes the cgroup.
servers_cap_cpu() { # pct
	local pct=$1 period=10000 quota dir
	quota=$((pct * period / 100))
	[ "$quota" -ge 1000 ] || { echo "servers.sh: a cap of $pct % is below 10 %" >&2; return 1; }
	if grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		dir=/sys/fs/cgroup/benchq-servers.$$
		mkdir "$dir" 2>/dev/null && echo "$quota $period" >"$dir/cpu.max"
	elif [ -w /sys/fs/cgroup/cpu ]; then
		dir=/sys/fs/cgroup/cpu/benchq-servers.$$
		mkdir "$dir" 2>/dev/null && echo "$period" >"$dir/cpu.cfs_period_us" && echo "$quota" >"$dir/cpu.cfs_quota_us"
	else
		false
	fi || { echo "servers.sh: cannot cap the servers' CPU: no writable cgroup cpu controller (root is needed)" >&2; return 1; }
	SERVERS_CGROUP=$dir
}

# _servers_run CPU CMD...: CMD in the background, pinned to CPU, in the
# capped cgroup if there is one (joined before exec, so that the workers
# a server forks are in it too).
_servers_run() {
	local cpu=$1
	shift
	if [ -n "$SERVERS_CGROUP" ]; then
		# shellcheck disable=SC2016 # expanded by sh
		sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' _ "$SERVERS_CGROUP" taskset -c "$cpu" "$@" &
	else
		taskset -c "$cpu" "$@" &
	fi
	SERVERS_PIDS+=($!)
}

servers_init() { # dir
	SERVERS_WORK=$1
	mkdir -p "$SERVERS_WORK/tmp" "$SERVERS_WORK/lighttpd-upload"
	# apache's children run as www-data and must reach the document root.
	chmod 755 "$SERVERS_WORK"
}

servers_seed_files() { # dir
	local dir=$1
	mkdir -p "$dir"
	_servers_html() { # size path
		{ printf '<html><body>'; head -c $(($1 - 27)) /dev/zero | tr '\0' 'x'; printf '</body></html>\n'; } >"$2"
	}
	head -c 25600 /dev/urandom >"$dir/test.jpg" # seed 000: 25 600-byte image
	_servers_html 49128 "$dir/test.html"        # seed 002: 49 128-byte HTML
	_servers_html 7638 "$dir/small.html"        # seed 001: 7 638-byte HTML
	_servers_html 61440 "$dir/static.html"      # seed 003: 60 kB static page
	_servers_html 442 "$dir/status.html"        # seed 004: 442-byte status page
	chmod -R a+rX "$dir"
}

servers_free_port() {
	# A port in the ephemeral range's gap below 32768, checked by connecting:
	# a refused connection means nothing listens there. Bounded tries.
	local port
	for _ in $(seq 200); do
		port=$((20000 + RANDOM % 12000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	echo "servers.sh: no free port found" >&2
	return 1
}

servers_start_apache() { # port cpu root
	local port=$1 cpu=$2 root=$3 w=$SERVERS_WORK
	cat >"$w/apache-$port.conf" <<EOF
ServerRoot /usr/lib/apache2
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule authz_core_module modules/mod_authz_core.so
LoadModule mime_module modules/mod_mime.so
TypesConfig /etc/mime.types
Listen 127.0.0.1:$port
ServerName 127.0.0.1
PidFile $w/apache-$port.pid
ErrorLog $w/apache-$port-error.log
Mutex file:$w default
DefaultRuntimeDir $w
User www-data
Group www-data
MaxRequestWorkers 400
ServerLimit 16
DocumentRoot $root
<Directory $root>
    Require all granted
</Directory>
EOF
	_servers_run "$cpu" /usr/sbin/apache2 -f "$w/apache-$port.conf" -DFOREGROUND
}

servers_start_lighttpd() { # port cpu root [extra]
	local port=$1 cpu=$2 root=$3 extra=${4:-} w=$SERVERS_WORK
	cat >"$w/lighttpd-$port.conf" <<EOF
server.document-root = "$root"
server.bind = "127.0.0.1"
server.port = $port
server.errorlog = "$w/lighttpd-$port-error.log"
server.upload-dirs = ( "$w/lighttpd-upload" )
server.max-fds = 8192
server.max-connections = 4096
mimetype.assign = ( ".html" => "text/html", ".jpg" => "image/jpeg" )
$extra
EOF
	_servers_run "$cpu" /usr/sbin/lighttpd -D -f "$w/lighttpd-$port.conf"
}

servers_start_nginx() { # port cpu root [extra]
	local port=$1 cpu=$2 root=$3 extra=${4:-} w=$SERVERS_WORK user_line=""
	[ "$(id -u)" = 0 ] && user_line="user root root;"
	cat >"$w/nginx-$port.conf" <<EOF
daemon off;
worker_processes 1;
$user_line
pid $w/nginx-$port.pid;
error_log $w/nginx-$port-error.log;
worker_rlimit_nofile 65536;
events { worker_connections 8192; }
http {
    access_log off;
    client_body_temp_path $w/tmp;
    proxy_temp_path $w/tmp;
    fastcgi_temp_path $w/tmp;
    uwsgi_temp_path $w/tmp;
    scgi_temp_path $w/tmp;
    $extra
    server { listen 127.0.0.1:$port backlog=4096; root $root; }
}
EOF
	_servers_run "$cpu" /usr/sbin/nginx -p "$w" -c "$w/nginx-$port.conf" -e "$w/nginx-$port-error.log"
}

servers_wait() { # url name
	for _ in $(seq 50); do
		curl -sf -o /dev/null --max-time 2 "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "servers.sh: $2 did not answer $1 within 5 s" >&2
	cat "$SERVERS_WORK"/*-error.log >&2 2>/dev/null || true
	return 1
}

servers_stop() {
	local pid
	for pid in "${SERVERS_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${SERVERS_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	SERVERS_PIDS=()
	if [ -n "$SERVERS_CGROUP" ]; then
		# A forked worker can outlive its parent by a moment.
		for _ in $(seq 50); do rmdir "$SERVERS_CGROUP" 2>/dev/null && break; sleep 0.1; done
		SERVERS_CGROUP=""
	fi
}
