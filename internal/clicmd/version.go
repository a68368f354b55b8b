package clicmd

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// versionText describes the binary from what the Go toolchain stamped into
// it: the module version (a tag, a pseudo-version, or "(devel)" for a
// build in a checkout), the VCS revision, its time and whether the tree
// had uncommitted changes, and the Go version. Nothing is injected at build
// time, so every way of building benchq (go install, docker, go build)
// tells the truth without a linker flag.
func versionText(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "benchq (no build information)\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "benchq %s\n", versionOr(info.Main.Version))
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		modified := ""
		if settings["vcs.modified"] == "true" {
			modified = " (modified)"
		}
		fmt.Fprintf(&b, "revision %s%s\n", rev, modified)
	}
	if t := settings["vcs.time"]; t != "" {
		fmt.Fprintf(&b, "commit time %s\n", t)
	}
	fmt.Fprintf(&b, "go %s\n", info.GoVersion)
	return b.String()
}

func versionOr(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// Version is `benchq version` and `benchq --version`.
func Version(_ context.Context, args []string, env Env) int {
	stdout, stderr := env.Stdout, env.Stderr
	fs := NewFlagSet("benchq version", versionSynopsis, stderr)
	if err := fs.Parse(args); err != nil {
		return UsageExit("benchq version", err, stderr)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return UsageExit("benchq version", fmt.Errorf("takes no arguments, got %q", fs.Args()), stderr)
	}
	fmt.Fprint(stdout, versionText(debug.ReadBuildInfo()))
	return ExitOK
}

const versionSynopsis = `benchq version

Prints the module version, the VCS revision and time the binary was built
from, and the Go version. Exits 0.`
