package abcli

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchq/benchq/internal/testservers"
)

// TestABByteCounts runs real ab and `benchq ab` with the same arguments
// against nginx, apache2 and lighttpd: since benchq ab sends ab's request
// byte for byte, the servers answer both alike and every byte count of
// the report is equal, not just close.
func TestABByteCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("byte counts against real ab and web servers: skipped with -short")
	}
	testservers.Require(t, "ab", "apache2-utils")
	files := seedFiles()
	for _, s := range testservers.All() {
		t.Run(s.Name, func(t *testing.T) {
			srv := s.Start(t, files)
			post := filepath.Join(srv.Dir, "www", "post.txt")
			tests := []struct {
				name string
				args []string
			}{
				{"get", []string{srv.URL + "/small.html"}},
				{"get -k", []string{"-k", srv.URL + "/small.html"}},
				{"post", []string{"-p", post, "-T", "application/x-www-form-urlencoded", srv.URL + "/post"}},
				{"post -k", []string{"-k", "-p", post, "-T", "application/x-www-form-urlencoded", srv.URL + "/post"}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					args := append([]string{"-n", "300", "-c", "3"}, tt.args...)
					abOut, _ := runRealAB(t, args)
					code, out, errOut := runABTest(t, context.Background(), args...)
					if code != 0 {
						t.Fatalf("benchq ab %q exit = %d, want 0; stderr:\n%s", args, code, errOut)
					}
					for _, label := range []string{"Complete requests", "Failed requests", "Non-2xx responses",
						"Keep-Alive requests", "Total transferred", "HTML transferred", "Total body sent"} {
						want, got := abField(abOut, label), abField(out, label)
						if got != want {
							t.Errorf("benchq ab %q: %s %q, ab %q", args, label, got, want)
						}
					}
					if got := abField(out, "Complete requests"); got != "300" {
						t.Errorf("benchq ab %q: Complete requests %s, want 300", args, got)
					}
					// A file's answer keeps the connection on every server
					// (lighttpd closes it after its answer to the POST of a missing page,
					// for ab as for benchq).
					if ka := abField(out, "Keep-Alive requests"); tt.name == "get -k" && ka != "300" {
						t.Errorf("benchq ab %q: Keep-Alive requests %q, want 300", args, ka)
					}
				})
			}
		})
	}
}
