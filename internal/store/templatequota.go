package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/template"
)

// TemplateLimits bound what one owner keeps in templates; a zero field
// is no bound.
type TemplateLimits struct {
	Templates int
	// Bytes bounds the JSON the owner's templates take together.
	Bytes int
	// Schedules bounds the owner's templates that have a schedule.
	Schedules int
	// PerRepository bounds the templates of every owner whose trigger of
	// one provider names one repository: a CI delivery is checked against
	// each of them before anything in it is trusted, so this bounds what
	// an unsigned delivery costs.
	PerRepository int
}

// Limit names the bound a LimitError hit.
type Limit string

// The bounds of what a key keeps stored.
const (
	LimitTemplates           Limit = "templates"
	LimitTemplateBytes       Limit = "template bytes"
	LimitSchedules           Limit = "schedules"
	LimitRepositoryTemplates Limit = "templates per repository"
	LimitPins                Limit = "pinned jobs"
)

// ErrLimit is wrapped by every write refused for a limit (*LimitError).
var ErrLimit = errors.New("store: limit reached")

// LimitError is a write refused because it would take its owner (or a
// repository's templates) past a limit: Max is the limit and Used what
// was in use when the write was refused.
type LimitError struct {
	Limit     Limit
	Max, Used int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("store: %s: %d in use, limit %d", e.Limit, e.Used, e.Max)
}

func (e *LimitError) Unwrap() error { return ErrLimit }

// accountTemplate checks a template's usage against the limits and, if
// it fits, records it, lists the template and indexes its repositories,
// all in one step inside Redis, so concurrent writes from any number of
// API processes cannot overshoot. KEYS: the all-templates set, the
// owner's names, the owner's usage hash, the repository index. ARGV:
// name, ref, usage value, bytes, scheduled (0/1), github repository
// ("-": none), gitlab project, then the limits: templates, bytes,
// schedules, per repository (0: none). It returns {0, the previous usage
// value or ""} or, refused, {code, use found}: 1 templates, 2 bytes,
// 3 schedules, 4 github repository, 5 gitlab project.
var accountTemplate = redis.NewScript(`
local name, ref, value = ARGV[1], ARGV[2], ARGV[3]
local bytes, sched, gh, gl = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], ARGV[7]
local maxT, maxB, maxS, maxR = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11])
local n, total, scheds = 0, 0, 0
local old, oldB, oldS, oldGh, oldGl = nil, 0, 0, '-', '-'
local all = redis.call('HGETALL', KEYS[3])
for i = 1, #all, 2 do
  local b, s, h, l = string.match(all[i+1], '^(%d+) (%d) (%S+) (%S+)')
  n = n + 1
  total = total + tonumber(b)
  if all[i] == name then
    old, oldB, oldS, oldGh, oldGl = all[i+1], tonumber(b), tonumber(s), h, l
  else
    scheds = scheds + tonumber(s)
  end
end
if not old and maxT > 0 and n >= maxT then return {1, n} end
if maxB > 0 and bytes > oldB and total - oldB + bytes > maxB then return {2, total} end
if maxS > 0 and sched == 1 and oldS == 0 and scheds >= maxS then return {3, scheds} end
local function count(p, repo)
  return redis.call('ZLEXCOUNT', KEYS[4], '[' .. p .. ' ' .. repo .. ' ', '(' .. p .. ' ' .. repo .. '!')
end
if maxR > 0 and gh ~= '-' and gh ~= oldGh then
  local c = count('github', gh)
  if c >= maxR then return {4, c} end
end
if maxR > 0 and gl ~= '-' and gl ~= oldGl then
  local c = count('gitlab', gl)
  if c >= maxR then return {5, c} end
end
redis.call('SADD', KEYS[1], ref)
redis.call('SADD', KEYS[2], name)
redis.call('HSET', KEYS[3], name, value)
if oldGh ~= '-' then redis.call('ZREM', KEYS[4], 'github ' .. oldGh .. ' ' .. ref) end
if oldGl ~= '-' then redis.call('ZREM', KEYS[4], 'gitlab ' .. oldGl .. ' ' .. ref) end
if gh ~= '-' then redis.call('ZADD', KEYS[4], 0, 'github ' .. gh .. ' ' .. ref) end
if gl ~= '-' then redis.call('ZADD', KEYS[4], 0, 'gitlab ' .. gl .. ' ' .. ref) end
return {0, old or ''}
`)

// unaccountTemplate undoes accountTemplate: while the usage of ARGV[1]
// is ARGV[3] ("": whatever it is), it is replaced by ARGV[4] with its
// repositories, or, when ARGV[4] is "", dropped with the template's
// listing. KEYS and ARGV[2] as accountTemplate's. It returns 1 when it
// changed anything.
var unaccountTemplate = redis.NewScript(`
local name, ref = ARGV[1], ARGV[2]
local cur = redis.call('HGET', KEYS[3], name)
if ARGV[3] ~= '' and cur ~= ARGV[3] then return 0 end
local function repos(v, f)
  if not v then return end
  local h, l = string.match(v, '^%d+ %d (%S+) (%S+)')
  if h and h ~= '-' then f('github ' .. h .. ' ' .. ref) end
  if l and l ~= '-' then f('gitlab ' .. l .. ' ' .. ref) end
end
repos(cur, function(m) redis.call('ZREM', KEYS[4], m) end)
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[3], name)
  redis.call('SREM', KEYS[2], name)
  redis.call('SREM', KEYS[1], ref)
else
  redis.call('HSET', KEYS[3], name, ARGV[4])
  repos(ARGV[4], function(m) redis.call('ZADD', KEYS[4], 0, m) end)
end
return 1
`)

// templateUsage is what one template counts for against its owner's
// limits, and where its triggers point.
type templateUsage struct {
	bytes, scheduled int
	github, gitlab   string // lower case; "-" for none
	value            string // as the usage hash keeps it
}

// usageOf is t's usage when its stored JSON takes size bytes, recorded
// at now. The value ends with a random token, so an undo recognises its
// own write, and the time, so a usage left by a write that never
// finished is told from one still being written.
func usageOf(t *template.Template, size int, now time.Time) templateUsage {
	u := templateUsage{bytes: size, github: "-", gitlab: "-"}
	if t.Schedule != nil {
		u.scheduled = 1
	}
	if g := t.Triggers.GitHub; g != nil && g.Repository != "" {
		u.github = RepositoryKey(g.Repository)
	}
	if g := t.Triggers.GitLab; g != nil && g.Project != "" {
		u.gitlab = RepositoryKey(g.Project)
	}
	u.value = strconv.Itoa(u.bytes) + " " + strconv.Itoa(u.scheduled) + " " + u.github + " " + u.gitlab + " " + claimToken() +
		" " + strconv.FormatInt(now.UnixMilli(), 10)
	return u
}

// RepositoryKey is how the repository index spells a repository: GitHub
// and GitLab compare names without case, and a name holds no blank.
func RepositoryKey(repo string) string {
	return strings.ToLower(strings.Join(strings.Fields(repo), ""))
}

func templateUsageKeys(owner string) []string {
	return []string{allTemplatesKey(), ownerTemplatesKey(owner), templateUsageKey(owner), templateReposKey()}
}

// account records u as the usage of owner's template name, within lim;
// it returns the usage value it replaced ("" for none). Refused, it first
// gives back usages whose template never got written (a process that
// died between the two, an undo lost to a Redis blip) and tries again,
// so such a leak heals at the next refusal instead of locking the owner
// out with a template no listing shows.
func (s *Store) account(ctx context.Context, owner, name string, u templateUsage, lim TemplateLimits) (string, error) {
	prev, err := s.tryAccount(ctx, owner, name, u, lim)
	if !errors.Is(err, ErrLimit) {
		return prev, err
	}
	freed, rerr := s.reclaimTemplateUsage(ctx, owner)
	if rerr != nil || freed == 0 {
		return prev, err
	}
	return s.tryAccount(ctx, owner, name, u, lim)
}

// reclaimTemplateUsage drops owner's usages recorded over reconcileGrace
// ago whose template does not exist, and returns how many it dropped.
func (s *Store) reclaimTemplateUsage(ctx context.Context, owner string) (int, error) {
	usage, err := s.rdb.HGetAll(ctx, templateUsageKey(owner)).Result()
	if err != nil {
		return 0, fmt.Errorf("store: reclaim template usage of %s: %w", owner, err)
	}
	names := make([]string, 0, len(usage))
	exists := make([]*redis.IntCmd, 0, len(usage))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for name := range usage {
			names = append(names, name)
			exists = append(exists, p.Exists(ctx, TemplateKey(owner, name)))
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: reclaim template usage of %s: %w", owner, err)
	}
	cutoff := s.now().Add(-reconcileGrace).UnixMilli()
	freed := 0
	for i, name := range names {
		f := strings.Fields(usage[name])
		ms, perr := strconv.ParseInt(f[len(f)-1], 10, 64)
		if exists[i].Val() == 1 || len(f) < 6 || perr != nil || ms > cutoff {
			continue
		}
		if err := s.unaccount(ctx, owner, name, usage[name], ""); err != nil {
			return freed, fmt.Errorf("store: reclaim template usage of %s: %w", owner, err)
		}
		freed++
	}
	return freed, nil
}

func (s *Store) tryAccount(ctx context.Context, owner, name string, u templateUsage, lim TemplateLimits) (string, error) {
	res, err := accountTemplate.Run(ctx, s.rdb, templateUsageKeys(owner),
		name, templateRef(owner, name), u.value, u.bytes, u.scheduled, u.github, u.gitlab,
		lim.Templates, lim.Bytes, lim.Schedules, lim.PerRepository).Slice()
	if err != nil {
		return "", err
	}
	if len(res) != 2 {
		return "", fmt.Errorf("%d values in the reply, want 2", len(res))
	}
	code, _ := res[0].(int64)
	if code == 0 {
		prev, _ := res[1].(string)
		return prev, nil
	}
	used, _ := res[1].(int64)
	le := &LimitError{Used: int(used)}
	switch code {
	case 1:
		le.Limit, le.Max = LimitTemplates, lim.Templates
	case 2:
		le.Limit, le.Max = LimitTemplateBytes, lim.Bytes
	case 3:
		le.Limit, le.Max = LimitSchedules, lim.Schedules
	default:
		le.Limit, le.Max = LimitRepositoryTemplates, lim.PerRepository
	}
	return "", le
}

// unaccount gives back what account recorded for owner's template name:
// while its usage is still ours ("": whatever it is), it becomes prev,
// or, when prev is "", the template is unlisted and frees its share.
func (s *Store) unaccount(ctx context.Context, owner, name, ours, prev string) error {
	return unaccountTemplate.Run(ctx, s.rdb, templateUsageKeys(owner), name, templateRef(owner, name), ours, prev).Err()
}

// TemplateUsage is what an owner's templates take against its limits.
type TemplateUsage struct {
	Templates, Bytes, Schedules int
}

// TemplateUsageOf reads what owner's templates take.
func (s *Store) TemplateUsageOf(ctx context.Context, owner string) (TemplateUsage, error) {
	vals, err := s.rdb.HVals(ctx, templateUsageKey(owner)).Result()
	if err != nil {
		return TemplateUsage{}, fmt.Errorf("store: template usage of %s: %w", owner, err)
	}
	var u TemplateUsage
	for _, v := range vals {
		f := strings.Fields(v)
		if len(f) < 2 {
			continue
		}
		b, _ := strconv.Atoi(f[0])
		u.Templates++
		u.Bytes += b
		if f[1] == "1" {
			u.Schedules++
		}
	}
	return u, nil
}

// TemplatesForRepository returns at most max templates (0: all) whose
// trigger of provider ("github", "gitlab") names repository, without
// case: the templates a delivery from that repository can concern.
func (s *Store) TemplatesForRepository(ctx context.Context, provider, repository string, max int) ([]*template.Template, error) {
	stem := provider + " " + RepositoryKey(repository) + " "
	members, err := s.rdb.ZRangeByLex(ctx, templateReposKey(), &redis.ZRangeBy{
		Min: "[" + stem, Max: "(" + provider + " " + RepositoryKey(repository) + "!", Count: int64(max),
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("store: templates of %s repository %s: %w", provider, repository, err)
	}
	refs := make([]string, 0, len(members))
	for _, m := range members {
		refs = append(refs, strings.TrimPrefix(m, stem))
	}
	return s.loadTemplates(ctx, refs)
}

// AccountTemplates records the usage of every template stored before
// usages were kept, so limits count them and the repository index finds
// them. Every API process calls it before it serves; once a run
// completed, later calls only read its mark.
func (s *Store) AccountTemplates(ctx context.Context) (int, error) {
	done, err := s.rdb.Exists(ctx, templatesAccountedKey()).Result()
	if err != nil {
		return 0, fmt.Errorf("store: account templates: %w", err)
	}
	if done == 1 {
		return 0, nil
	}
	all, err := s.ListAllTemplates(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: account templates: %w", err)
	}
	n := 0
	for _, t := range all {
		have, err := s.rdb.HExists(ctx, templateUsageKey(t.Owner), t.Name).Result()
		if err != nil {
			return n, fmt.Errorf("store: account templates: %w", err)
		}
		if have {
			continue
		}
		data, err := json.Marshal(t)
		if err != nil {
			return n, fmt.Errorf("store: account template %s: %w", templateRef(t.Owner, t.Name), err)
		}
		if _, err := s.account(ctx, t.Owner, t.Name, usageOf(t, len(data), s.now()), TemplateLimits{}); err != nil {
			return n, fmt.Errorf("store: account template %s: %w", templateRef(t.Owner, t.Name), err)
		}
		n++
	}
	if err := s.rdb.Set(ctx, templatesAccountedKey(), "1", 0).Err(); err != nil {
		return n, fmt.Errorf("store: account templates: mark done: %w", err)
	}
	return n, nil
}
