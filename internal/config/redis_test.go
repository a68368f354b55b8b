package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRedisURL(t *testing.T) {
	tests := []struct {
		url              string
		addrs            []string
		db               int
		master, password string
		cluster, tls     bool
	}{
		{url: "redis://127.0.0.1:6379/0", addrs: []string{"127.0.0.1:6379"}},
		{url: "redis://:secret@127.0.0.1:6380/2", addrs: []string{"127.0.0.1:6380"}, db: 2, password: "secret"},
		{url: "rediss://127.0.0.1:6380", addrs: []string{"127.0.0.1:6380"}, tls: true},
		{url: "redis+sentinel://127.0.0.1:26379/1?master_name=mymaster&addr=127.0.0.1:26380",
			addrs: []string{"127.0.0.1:26379", "127.0.0.1:26380"}, db: 1, master: "mymaster"},
		{url: "redis+cluster://127.0.0.1:7000", addrs: []string{"127.0.0.1:7000"}, cluster: true},
		{url: "rediss+cluster://127.0.0.1:7000?addr=127.0.0.1:7001", addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}, cluster: true, tls: true},
		{url: "unix:///var/lib/benchq/redis.sock", addrs: []string{"/var/lib/benchq/redis.sock"}},
		{url: "unix:///tmp/r.sock?db=3", addrs: []string{"/tmp/r.sock"}, db: 3},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			o, err := ParseRedisURL(tt.url)
			if err != nil {
				t.Fatalf("ParseRedisURL(%q) error: %v", tt.url, err)
			}
			if d := cmp.Diff(tt.addrs, o.Addrs); d != "" {
				t.Errorf("ParseRedisURL(%q).Addrs (-want +got):\n%s", tt.url, d)
			}
			if o.DB != tt.db || o.MasterName != tt.master || o.Password != tt.password || o.IsClusterMode != tt.cluster {
				t.Errorf("ParseRedisURL(%q) = db %d master %q password %q cluster %v, want %d %q %q %v",
					tt.url, o.DB, o.MasterName, o.Password, o.IsClusterMode, tt.db, tt.master, tt.password, tt.cluster)
			}
			if got := o.TLSConfig != nil; got != tt.tls {
				t.Errorf("ParseRedisURL(%q) TLS = %v, want %v", tt.url, got, tt.tls)
			}
		})
	}
}

func TestParseRedisURLErrors(t *testing.T) {
	for _, raw := range []string{
		"http://127.0.0.1:6379",
		"redis+sentinel://127.0.0.1:26379", // no master name
		"redis+mesh://127.0.0.1:6379",
		"redis://127.0.0.1:6379/notadb",
		"unix://", // no socket path
		"redis://127.0.0.1:6379/0?no_such_option=1",
		"://",
		"redis://:s3cretpw@127.0.0.1:notaport/0",
		"redis://:s3cretpw@127.0.0.1:6379/notadb",
		"redis+sentinel://:s3cretpw@127.0.0.1:26379",
		"redis+cluster://:s3cretpw@127.0.0.1:6379/0?no_such_option=1",
		"ftp://:s3cretpw@127.0.0.1/",
	} {
		_, err := ParseRedisURL(raw)
		if err == nil || !strings.HasPrefix(err.Error(), "redis-url: ") {
			t.Errorf("ParseRedisURL(%q) = %v, want a redis-url error", raw, err)
		} else if strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("ParseRedisURL(%q) = %v, which shows the password", raw, err)
		}
	}
}
