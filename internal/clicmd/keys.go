package clicmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/client"
	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/localredis"
	"github.com/benchq/benchq/internal/store"
)

// Exit statuses of `benchq keys`.
const (
	KeysExitOK     = 0
	KeysExitFailed = 1 // Redis refused or failed, or no such key
	KeysExitUsage  = 2 // bad command line
)

// keysUsage is the help of `benchq keys` without a subcommand, in the
// layout newFlagSet gives every command's -h.
const keysUsage = "usage: " + keysSynopsis + "\n"

const keysSynopsis = `benchq keys add NAME [--admin] [--max-concurrency N] [--max-requests N] [--max-duration D]
                       [--max-runs N] [--max-active-jobs N] [--submissions-per-minute N]
                       [--max-templates N] [--max-template-bytes N] [--max-schedules N]
                       [--max-pins N] [--webhook-secret-file FILE]
       benchq keys list
       benchq keys revoke ID

Manages API keys in the Redis of --redis-url (env BENCHQ_REDIS_URL, else
the all-in-one's redis-server socket in its data directory). "add"
prints the new key once: only its SHA-256 is stored, so it cannot be shown
again. Quota flags left at 0 follow the service-wide defaults.`

// Keys is `benchq keys add|list|revoke`.
func Keys(ctx context.Context, args []string, env Env) int {
	getenv, stdout, stderr := env.Getenv, env.Stdout, env.Stderr
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, keysUsage)
		if len(args) == 0 {
			return KeysExitUsage
		}
		return KeysExitOK
	}
	sub, rest := args[0], args[1:]
	var cmd keysCommand
	fs := cmd.flags(sub, stderr)
	pos, err := parseInterleaved(fs, rest)
	if errors.Is(err, flag.ErrHelp) {
		return KeysExitOK
	}
	if err == nil {
		err = cmd.fromEnvAndFiles(getenv)
	}
	if err == nil {
		err = cmd.check(sub, pos)
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchq keys: %v\n\n%s", err, keysUsage)
		return KeysExitUsage
	}
	st, closeStore, err := openKeyStore(ctx, cmd.redisURL)
	if err != nil {
		fmt.Fprintf(stderr, "benchq keys: %v\n", err)
		return KeysExitFailed
	}
	defer closeStore()
	switch sub {
	case "add":
		err = cmd.add(ctx, st, pos[0], stdout, stderr)
	case "list":
		err = listKeys(ctx, st, stdout)
	case "revoke":
		err = revokeKey(ctx, st, pos[0], stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "benchq keys %s: %v\n", sub, err)
		return KeysExitFailed
	}
	return KeysExitOK
}

// keysCommand is the parsed command line of one `benchq keys` call.
type keysCommand struct {
	redisURL          string
	admin             bool
	quota             apikey.Quota
	webhookSecret     string
	webhookSecretFile string
}

// fromEnvAndFiles fills in what the command line left out from the
// environment, and reads the secret files. BENCHQ_REDIS_URL is no flag
// default because flag prints defaults in its usage message, and the URL
// may carry Redis's password.
func (k *keysCommand) fromEnvAndFiles(getenv func(string) string) error {
	if k.redisURL == "" {
		k.redisURL = getenv("BENCHQ_REDIS_URL")
	}
	if k.redisURL == "" {
		k.redisURL = allInOneRedis(getenv)
	}
	if k.webhookSecretFile == "" {
		return nil
	}
	if k.webhookSecret != "" {
		return errors.New("give --webhook-secret or --webhook-secret-file, not both")
	}
	secret, err := readSecretFile(k.webhookSecretFile)
	if err != nil {
		return fmt.Errorf("--webhook-secret-file: %w", err)
	}
	k.webhookSecret = secret
	return nil
}

func (k *keysCommand) flags(sub string, stderr io.Writer) *flag.FlagSet {
	fs := NewFlagSet("benchq keys "+sub, keysSynopsis, stderr)
	fs.StringVar(&k.redisURL, "redis-url", "", "Redis URL (default: env BENCHQ_REDIS_URL, else the socket of the all-in-one's redis-server in its data directory)")
	if sub != "add" {
		return fs
	}
	q := &k.quota
	fs.BoolVar(&k.admin, "admin", false, "the key sees and manages every job")
	fs.IntVar(&q.MaxConcurrency, "max-concurrency", 0, "largest concurrency per run (0: service default)")
	fs.IntVar(&q.MaxRequests, "max-requests", 0, "largest request count per run (0: service default)")
	fs.DurationVar(&q.MaxDuration, "max-duration", 0, "longest run duration (0: service default)")
	fs.IntVar(&q.MaxRuns, "max-runs", 0, "most runs per job (0: service default)")
	fs.IntVar(&q.MaxActiveJobs, "max-active-jobs", 0, "most queued + running jobs (0: service default)")
	fs.IntVar(&q.SubmissionsPerMinute, "submissions-per-minute", 0, "most job submissions per minute (0: service default)")
	fs.IntVar(&q.MaxTemplates, "max-templates", 0, "most templates kept (0: service default)")
	fs.IntVar(&q.MaxTemplateBytes, "max-template-bytes", 0, "most bytes the templates take together (0: service default)")
	fs.IntVar(&q.MaxSchedules, "max-schedules", 0, "most templates with a schedule (0: service default)")
	fs.IntVar(&q.MaxPins, "max-pins", 0, "most jobs pinned at once (0: service default)")
	fs.StringVar(&k.webhookSecretFile, "webhook-secret-file", "", "read the whsec_... secret signing the webhooks of the key's jobs from this file")
	fs.StringVar(&k.webhookSecret, "webhook-secret", "", "the whsec_... secret itself; prefer --webhook-secret-file, as any user of the machine can read a command line (ps)")
	return fs
}

// KeysSubcommands maps each `benchq keys` subcommand to the number of
// arguments it takes.
func KeysSubcommands() map[string]int { return map[string]int{"add": 1, "list": 0, "revoke": 1} }

// check validates what the flags cannot: arity, the Redis URL, the quota.
func (k *keysCommand) check(sub string, pos []string) error {
	n, ok := KeysSubcommands()[sub]
	switch {
	case !ok:
		return fmt.Errorf("unknown subcommand %q", sub)
	case len(pos) != n:
		return fmt.Errorf("%s takes %d argument(s), got %d", sub, n, len(pos))
	case k.redisURL == "":
		return errors.New("needs a Redis URL (--redis-url or BENCHQ_REDIS_URL): no all-in-one redis-server socket was found in its data directory (BENCHQ_DATA_DIR, else the XDG default); an all-in-one with an embedded in-memory Redis keeps no keys another process can add to")
	}
	if err := k.quota.Validate(); err != nil {
		return err
	}
	return apikey.CheckWebhookSecret(k.webhookSecret)
}

// parseInterleaved parses flags given before, between and after the
// positional arguments, as `benchq keys add ci --admin` is as natural as
// the flags-first form.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func openKeyStore(ctx context.Context, url string) (*store.Store, func(), error) {
	opts, err := config.ParseRedisURL(url)
	if err != nil {
		return nil, nil, err
	}
	rdb := redis.NewUniversalClient(opts)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pctx).Err(); err != nil {
		_ = rdb.Close()
		// The URL is not quoted: it may carry Redis's password. The
		// error is printed and the command ends, so it is a sentence
		// rather than go-redis's chain.
		return nil, nil, fmt.Errorf("cannot reach Redis (%s); check --redis-url (env BENCHQ_REDIS_URL) and that Redis is running", client.Reason(err))
	}
	st := store.New(rdb, store.Options{})
	// Before the first write, so a key added to an old data directory
	// lands beside the keys it has, not apart from them.
	if _, err := st.MigrateKeys(ctx); err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	return st, func() { _ = rdb.Close() }, nil
}

// add mints and stores a key and prints it: the key alone on stdout (so
// KEY=$(benchq keys add ci) works), the rest on stderr.
func (k *keysCommand) add(ctx context.Context, st *store.Store, name string, stdout, stderr io.Writer) error {
	key, plain, err := apikey.New(name, k.admin, k.quota, k.webhookSecret, time.Now())
	if err != nil {
		return err
	}
	if err := st.AddKey(ctx, key); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Created API key %s (%q, admin %t, quota %s).\n", key.ID, name, key.Admin, key.Quota)
	fmt.Fprintln(stderr, "The key is printed below once; only its hash is stored. Send it as Authorization: Bearer <key>.")
	fmt.Fprintln(stdout, plain)
	return nil
}

// listKeys prints every key as a table; never a hash or secret.
func listKeys(ctx context.Context, st *store.Store, stdout io.Writer) error {
	keys, err := st.ListKeys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tADMIN\tQUOTA\tCREATED\tREVOKED")
	for _, k := range keys {
		revoked := "-"
		if k.Revoked() {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\t%s\n", k.ID, k.Name, k.Admin, k.Quota, k.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func revokeKey(ctx context.Context, st *store.Store, id string, stdout io.Writer) error {
	k, err := st.RevokeKey(ctx, id, time.Now())
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no key %q (benchq keys list shows the ids)", id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Revoked %s (%q) at %s.\n", k.ID, k.Name, k.RevokedAt.Format(time.RFC3339))
	return nil
}

// allInOneRedis is the URL of the all-in-one's redis-server child when its
// socket is in the data directory the all-in-one would use (BENCHQ_DATA_DIR,
// else the XDG default), "" otherwise: on the machine it runs on, keys
// find its Redis as it does, with nothing to copy from its log.
func allInOneRedis(getenv func(string) string) string {
	dir := getenv("BENCHQ_DATA_DIR")
	if dir == "" {
		dir = config.DefaultDataDir(getenv)
	}
	if dir == "" {
		return ""
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	sock := localredis.SocketIn(dir)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != fs.ModeSocket {
		return ""
	}
	return "unix://" + sock
}
