package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/clicmd"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/secrettest"
)

// TestNoSecretInHelpOrUsageErrors: with an API key and a Redis URL with a
// password in the environment, -h, --help and an unknown flag of every
// command print neither: each command of the dispatch table (and each
// `benchq keys` subcommand), and the service's commands.
func TestNoSecretInHelpOrUsageErrors(t *testing.T) {
	key := secrettest.Random(t, "bq_")
	redisPassword := secrettest.Random(t, "")
	t.Setenv("BENCHQ_API_KEY", key)
	t.Setenv("BENCHQ_REDIS_URL", "redis://:"+redisPassword+"@127.0.0.1:1/0")

	var lines [][]string
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range subcommands() {
			if !yield(name) {
				return
			}
		}
	})
	for _, name := range names {
		lines = append(lines, []string{name})
	}
	for sub := range clicmd.KeysSubcommands() {
		lines = append(lines, []string{"keys", sub})
	}
	lines = append(lines, nil) // the all-in-one
	for _, c := range []config.Command{config.CommandServe, config.CommandWorker, config.CommandAll} {
		lines = append(lines, []string{string(c)})
	}
	if len(names) < 7 {
		t.Fatalf("the command table has %d commands (%q), want at least submit, get, cancel, report, keys, ab, healthcheck", len(names), names)
	}
	for _, cmd := range lines {
		for _, flag := range []string{"-h", "--help", "--bogus"} {
			args := append(slices.Clone(cmd), flag)
			var stdout, stderr bytes.Buffer
			run(t.Context(), args, nil, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			if out == "" {
				t.Errorf("benchq %q printed nothing, want its usage", args)
			}
			if shown := secrettest.Leaks(out, key, redisPassword); len(shown) > 0 {
				t.Errorf("benchq %q shows a secret (%d of them):\n%s", args, len(shown), out)
			}
		}
	}
}
