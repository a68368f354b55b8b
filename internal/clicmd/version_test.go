package clicmd

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionText(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want []string
		not  []string
	}{
		{"no info", nil, false, []string{"benchq (no build information)"}, []string{"go "}},
		{"tagged clean", &debug.BuildInfo{GoVersion: "go1.25.1", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "false"}}},
			true, []string{"benchq v1.2.3\n", "revision abc123\n", "commit time 2026-01-02T03:04:05Z\n", "go go1.25.1\n"}, []string{"modified"}},
		{"devel modified", &debug.BuildInfo{GoVersion: "go1.25.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "def456"}, {Key: "vcs.modified", Value: "true"}}},
			true, []string{"benchq (devel)\n", "revision def456 (modified)\n"}, []string{"commit time"}},
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.25.1"}, true, []string{"benchq (devel)\n", "go go1.25.1\n"}, []string{"revision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := versionText(tt.info, tt.ok)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("versionText = %q, want %q in it", got, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("versionText = %q, want no %q", got, n)
				}
			}
		})
	}
}
