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
#   servers_start_nginx PORT CPU ROOT [EXTRA [SERVER]]
#   servers_dokuwiki DIR               a private copy of Debian's DokuWiki in DIR, two pages
#   servers_start_apache_php PORT CPU DIR on|off    DIR's DokuWiki on apache + mod_php, OPcache on or off
#   servers_start_lighttpd_php PORT CPU DIR on|off  DIR's DokuWiki on lighttpd + php-cgi (FastCGI)
#   servers_cap_cpu PCT                the servers started after it share PCT % of one CPU
#   servers_wait URL NAME              waits (5 s at most) until URL answers 2xx
#   servers_stop                       stops every server started, waits for each
#
# Every server runs in the foreground of a background job pinned with
# taskset, so its pid is known and servers_stop ends exactly the processes
# started here. EXTRA is appended to lighttpd's configuration or inside
# nginx's http block; SERVER inside nginx's server block (more listen
# lines, TLS). Only 127.0.0.1 is ever bound.

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

# _servers_apache_conf PORT MPM ROOT: the configuration apache needs on
# 127.0.0.1:PORT with the MPM named (event, prefork) serving ROOT, its
# files in the work directory, its children as www-data; a caller appends
# its own lines.
_servers_apache_conf() { # port mpm root
	local port=$1 mpm=$2 root=$3 w=$SERVERS_WORK
	cat <<EOF
ServerRoot /usr/lib/apache2
LoadModule mpm_${mpm}_module modules/mod_mpm_${mpm}.so
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
DocumentRoot $root
<Directory $root>
    AllowOverride None
    Require all granted
</Directory>
EOF
}

servers_start_apache() { # port cpu root
	local port=$1 cpu=$2 root=$3 w=$SERVERS_WORK
	{
		_servers_apache_conf "$port" event "$root"
		echo "MaxRequestWorkers 400"
		echo "ServerLimit 16"
	} >"$w/apache-$port.conf"
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

servers_start_nginx() { # port cpu root [extra [server]]
	local port=$1 cpu=$2 root=$3 extra=${4:-} server=${5:-} w=$SERVERS_WORK user_line=""
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
    server { listen 127.0.0.1:$port backlog=4096; root $root; $server }
}
EOF
	_servers_run "$cpu" /usr/sbin/nginx -p "$w" -c "$w/nginx-$port.conf" -e "$w/nginx-$port-error.log"
}

# servers_dokuwiki DIR: a copy of Debian's DokuWiki in DIR/wiki, its
# configuration in DIR/conf and its pages in DIR/data, so that the system's
# wiki is never touched and the copy is thrown away with DIR. Two pages as
# seed 003 used: "zeittafel", a simple page (one table), and "start", a
# complex one (headings, a table of contents, footnotes, code blocks and
# ~80 internal links whose pages are looked up). Pages are served at
# /doku.php?id=NAME. Owned by www-data: apache's children write the wiki's
# cache.
servers_dokuwiki() { # dir
	local d=$1 i j
	mkdir -p "$d"
	cp -rL /usr/share/dokuwiki "$d/wiki"
	cp -rL /etc/dokuwiki "$d/conf"
	cp -rL /var/lib/dokuwiki/data "$d/data"
	printf "<?php\ndefine('DOKU_CONF', '%s/conf/');\ndefine('DOKU_MAIN_CONF', '%s/conf/');\n" "$d" "$d" >"$d/wiki/inc/preload.php"
	{
		echo '<?php'
		echo "\$conf['title'] = 'benchq seed 003';"
		echo "\$conf['savedir'] = '$d/data';"
		echo "\$conf['useacl'] = 0;"
		echo "\$conf['userewrite'] = 0;"
		echo "\$conf['updatecheck'] = 0;"
		echo "\$conf['breadcrumbs'] = 0;"
	} >"$d/conf/local.php"
	{
		echo '====== Zeittafel ======'
		echo '^ Jahr ^ Ereignis ^ Ort ^'
		for i in $(seq 1800 1839); do
			echo "| $i | Ereignis des Jahres $i in der Chronik | Schwabegg |"
		done
	} >"$d/data/pages/zeittafel.txt"
	{
		echo '====== SmüPedia ======'
		echo 'Willkommen in der **SmüPedia**, dem Wiki über //Schwabegg// und seine Umgebung.((Eine Fußnote.))'
		for i in $(seq 1 8); do
			echo "===== Abschnitt $i ====="
			echo "Text des Abschnitts $i mit [[zeittafel|der Zeittafel]] und [[blog:eintrag$i]].((Fußnote $i.))"
			echo "==== Unterabschnitt $i ===="
			for j in $(seq 1 10); do
				echo "  * [[bilder:galerie$i$j|Bild $j der Galerie $i]] neben [[zeittafel]]"
			done
			echo "<code>"
			echo "Abschnitt $i: ein Block, wie DokuWiki ihn setzt"
			echo "</code>"
		done
	} >"$d/data/pages/start.txt"
	chown -R www-data:www-data "$d" 2>/dev/null || true
	chmod -R a+rX "$d"
}

# _servers_opcache on|off: php's settings for OPcache on or off. On, it
# keeps the compiled scripts in shared memory (what XCache did in seed
# 003); off, every request compiles DokuWiki's PHP again.
_servers_opcache() {
	case $1 in
	on) echo "opcache.enable=1 opcache.validate_timestamps=0 opcache.memory_consumption=128" ;;
	off) echo "opcache.enable=0" ;;
	*) echo "servers.sh: OPcache is on or off, not $1" >&2; return 1 ;;
	esac
}

servers_start_apache_php() { # port cpu dir on|off
	local port=$1 cpu=$2 d=$3 w=$SERVERS_WORK settings kv php
	settings=$(_servers_opcache "$4") || return 1
	php=$(compgen -G '/usr/lib/apache2/modules/libphp*.so' | head -n 1)
	[ -n "$php" ] || { echo "servers.sh: no mod_php (libapache2-mod-php)" >&2; return 1; }
	{
		_servers_apache_conf "$port" prefork "$d/wiki"
		cat <<EOF
LoadModule dir_module modules/mod_dir.so
LoadModule php_module $php
MaxRequestWorkers 150
DirectoryIndex doku.php
<FilesMatch "\.php\$">
    SetHandler application/x-httpd-php
</FilesMatch>
EOF
		for kv in $settings; do echo "php_admin_value ${kv%%=*} ${kv#*=}"; done
	} >"$w/apache-$port.conf"
	_servers_run "$cpu" /usr/sbin/apache2 -f "$w/apache-$port.conf" -DFOREGROUND
}

servers_start_lighttpd_php() { # port cpu dir on|off
	local port=$1 cpu=$2 d=$3 settings kv bin=/usr/bin/php-cgi
	settings=$(_servers_opcache "$4") || return 1
	# lighttpd splits bin-path on spaces into the program and its arguments.
	for kv in $settings; do bin="$bin -d $kv"; done
	servers_start_lighttpd "$port" "$cpu" "$d/wiki" "server.modules += ( \"mod_fastcgi\" )
index-file.names = ( \"doku.php\" )
fastcgi.server = ( \".php\" => ((
    \"bin-path\" => \"$bin\",
    \"bin-copy-environment\" => ( \"PATH\" ),
    \"bin-environment\" => ( \"PHP_FCGI_CHILDREN\" => \"4\", \"PHP_FCGI_MAX_REQUESTS\" => \"100000\" ),
    \"socket\" => \"$SERVERS_WORK/php-$port.sock\",
    \"max-procs\" => 1
)))"
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
