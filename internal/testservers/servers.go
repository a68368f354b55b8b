package testservers

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is a web server process owned by one test.
type Server struct {
	Name string // "nginx", "apache2" or "lighttpd"
	URL  string // http://127.0.0.1:PORT, without a trailing slash
	Dir  string // the temp directory: config, logs, and www/ with the files
}

// Files are what a server serves from its document root: name to content.
type Files map[string][]byte

// Starter starts one kind of server; All lists them.
type Starter struct {
	Name  string
	Start func(t testing.TB, files Files) *Server
}

// All returns a starter for each server this package knows.
func All() []Starter {
	return []Starter{{"nginx", Nginx}, {"apache2", Apache}, {"lighttpd", Lighttpd}}
}

// Require returns the path of the program bin (looked up on PATH, then in
// /usr/sbin, where Debian puts servers). Without it the test is skipped,
// or fails under CI.
func Require(t testing.TB, bin, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	if p := filepath.Join("/usr/sbin", bin); isExecutable(p) {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("testservers: %s not installed under CI (apt-get install -y %s)", bin, pkg)
	}
	t.Skipf("testservers: %s not installed (apt-get install -y %s); skipping", bin, pkg)
	return ""
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// Nginx runs nginx in one process (no master), so killing it stops it all.
// Besides the files it answers POST /post with "posted\n" (200).
func Nginx(t testing.TB, files Files) *Server {
	t.Helper()
	return nginx(t, files, nil)
}

// FavouredNginx is Nginx pinned to cpus and given the CPU before other
// work on the machine, as FavouredCommand runs a process: a benchmarked
// server on cores of its own. It needs root, as FavouredCommand does.
func FavouredNginx(t testing.TB, files Files, cpus string) *Server {
	t.Helper()
	return nginx(t, files, func(args []string) []string { return favouredArgs(t, cpus, args...) })
}

// nginx starts Nginx, its command line wrapped by favour when not nil.
func nginx(t testing.TB, files Files, favour func(args []string) []string) *Server {
	t.Helper()
	bin := Require(t, "nginx", "nginx")
	return startAs(t, "nginx", files, favour, func(dir, addr string) (string, []string) {
		user := ""
		if os.Geteuid() == 0 {
			user = "user root root;" // the temp dir is private to root
		}
		conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
%[3]s
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    server {
        listen %[2]s;
        root %[1]s/www;
        location = /post { return 200 "posted\n"; }
    }
}
`, dir, addr, user)
		path := writeConf(t, dir, "nginx.conf", conf)
		return bin, []string{"-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log")}
	})
}

// Apache runs apache2 with mpm_event in the foreground. As root its
// children run as www-data, so the temp directory is opened to them.
func Apache(t testing.TB, files Files) *Server {
	t.Helper()
	bin := Require(t, "apache2", "apache2")
	return start(t, "apache2", files, func(dir, addr string) (string, []string) {
		user := ""
		if os.Geteuid() == 0 {
			user = "User www-data\nGroup www-data"
		}
		conf := fmt.Sprintf(`LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
ServerRoot %[1]s
ServerName 127.0.0.1
Listen %[2]s
PidFile %[1]s/apache2.pid
ErrorLog %[1]s/error.log
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
DocumentRoot %[1]s/www
<Directory />
    Require all granted
</Directory>
%[3]s
KeepAlive On
MaxKeepAliveRequests 0
StartServers 1
ServerLimit 1
ThreadsPerChild 64
MaxRequestWorkers 64
MinSpareThreads 8
MaxSpareThreads 64
`, dir, addr, user)
		path := writeConf(t, dir, "apache2.conf", conf)
		return bin, []string{"-f", path, "-DFOREGROUND"}
	})
}

// Lighttpd runs lighttpd in the foreground.
func Lighttpd(t testing.TB, files Files) *Server {
	t.Helper()
	bin := Require(t, "lighttpd", "lighttpd")
	return start(t, "lighttpd", files, func(dir, addr string) (string, []string) {
		host, port, _ := net.SplitHostPort(addr)
		conf := fmt.Sprintf(`server.document-root = %[1]q
server.bind = %[2]q
server.port = %[3]s
server.errorlog = "%[4]s/error.log"
server.max-keep-alive-requests = 1000000
mimetype.assign = (".html" => "text/html", ".jpg" => "image/jpeg", ".txt" => "text/plain")
`, filepath.Join(dir, "www"), host, port, dir)
		path := writeConf(t, dir, "lighttpd.conf", conf)
		return bin, []string{"-D", "-f", path}
	})
}

func writeConf(t testing.TB, dir, name, conf string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// start lays out the files, lets command build the server's config and
// command line for a free address, starts it and waits until it listens.
// The port is picked by listening on :0 and closing, so another process
// may take it first: a server that exits before it listens means a lost
// race, and start tries again on a new port.
func start(t testing.TB, name string, files Files, command func(dir, addr string) (string, []string)) *Server {
	t.Helper()
	return startAs(t, name, files, nil, command)
}

// startAs is start with the command line wrapped by favour
// (favouredArgs), when not nil, and the server then run as
// FavouredCommand runs a process.
func startAs(t testing.TB, name string, files Files, favour func(args []string) []string, command func(dir, addr string) (string, []string)) *Server {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// Servers that drop root (apache2) read the files as another user.
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	www := filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	// Apache gives a file modified less than a second before the request a
	// weak ETag, two bytes longer: files from the past make every answer the
	// same length however soon after the start the first request comes.
	past := time.Now().Add(-time.Hour)
	for f, body := range files {
		path := filepath.Join(www, f)
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		addr := freeLoopbackAddr(t)
		bin, args := command(dir, addr)
		if favour != nil {
			args = favour(append([]string{bin}, args...))
			bin, args = args[0], args[1:]
		}
		err := run(t, name, dir, addr, bin, args, favour != nil)
		if err == nil {
			return &Server{Name: name, URL: "http://" + addr, Dir: dir}
		}
		lastErr = err
	}
	t.Fatalf("testservers: %s did not start: %v", name, lastErr)
	return nil
}

// run starts the server and waits until addr accepts connections; on
// success the server is stopped when the test ends.
func run(t testing.TB, name, dir, addr, bin string, args []string, favoured bool) error {
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	// Its own process group, so that stopping it reaches the children a
	// server forks (apache2's), and only those; a favoured one in a
	// session of its own, which leads a process group too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if favoured {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	if favoured {
		FavourStarted(cmd.Process.Pid)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("%s exited before listening on %s (%v): %s%s", name, addr, err, out.String(), errorLog(dir))
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			_ = c.Close()
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("%s output:\n%s%s", name, out.String(), errorLog(dir))
				}
			})
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return errors.New(name + " did not listen on " + addr + " within 10s: " + out.String() + errorLog(dir))
}

func errorLog(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "error.log"))
	if err != nil || len(b) == 0 {
		return ""
	}
	return "\nerror.log:\n" + string(b)
}

func freeLoopbackAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
