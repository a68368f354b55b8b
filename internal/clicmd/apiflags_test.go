package clicmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/secrettest"
)

// TestKeyFile: the key comes from --key-file, BENCHQ_API_KEY or --key, in
// that order of preference the help states; a file that cannot be read or
// is empty is a usage error quoting neither its name nor its content.
func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("  bq_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pasted := secrettest.Random(t, "bq_") // a key given where the path belongs
	tests := []struct {
		name    string
		env     string
		args    []string
		want    string // the key sent
		wantErr string
	}{
		{name: "environment", env: "bq_fromenv", want: "bq_fromenv"},
		{name: "file over environment", env: "bq_fromenv", args: []string{"--key-file", keyFile}, want: "bq_fromfile"},
		{name: "flag over environment", env: "bq_fromenv", args: []string{"--key", "bq_fromflag"}, want: "bq_fromflag"},
		{name: "none", want: ""},
		{name: "flag and file", args: []string{"--key", "x", "--key-file", keyFile}, wantErr: "not both"},
		{name: "missing file", args: []string{"--key-file", pasted}, wantErr: "--key-file: cannot open the file: no such file or directory"},
		{name: "empty file", args: []string{"--key-file", empty}, wantErr: "--key-file: the file is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			getenv := func(name string) string {
				if name == "BENCHQ_API_KEY" {
					return tt.env
				}
				return ""
			}
			a, err := parseSubmitArgs(append([]string{"--ab", "-n 1 http://127.0.0.1:1/"}, tt.args...), Env{Getenv: getenv, Stderr: &stderr})
			if err != nil {
				t.Fatal(err)
			}
			c, err := a.api.Client()
			switch {
			case tt.wantErr != "":
				if err == nil || err.Error() != tt.wantErr && !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("client() error = %v, want %q", err, tt.wantErr)
				}
				if err != nil && len(secrettest.Leaks(err.Error(), pasted, dir)) > 0 {
					t.Errorf("client() error %q quotes the file's name", err)
				}
			case err != nil:
				t.Errorf("client() = %v", err)
			case c.Key != tt.want:
				t.Errorf("key sent = %q, want %q", c.Key, tt.want)
			}
		})
	}
}
