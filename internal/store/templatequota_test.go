package store_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

func limitOf(t *testing.T, err error) *store.LimitError {
	t.Helper()
	var le *store.LimitError
	if !errors.As(err, &le) || !errors.Is(err, store.ErrLimit) {
		t.Fatalf("err = %v, want a *store.LimitError wrapping ErrLimit", err)
	}
	return le
}

// TestTemplateLimitsRacing: 20 creations at once against a limit of 5
// store exactly 5, from two stores sharing one Redis (two API replicas);
// a replacement is not a creation; a delete frees a place.
func TestTemplateLimitsRacing(t *testing.T) {
	s, rdb := newStore(t)
	other := store.New(rdb, store.Options{})
	ctx := t.Context()
	lim := store.TemplateLimits{Templates: 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stored, refused int
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := s
			if i%2 == 1 {
				st = other
			}
			_, err := st.PutTemplateWithin(ctx, newTemplate("key_a", fmt.Sprintf("t%02d", i)), lim)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.Is(err, store.ErrLimit):
				refused++
			default:
				t.Errorf("PutTemplateWithin: %v", err)
			}
		}()
	}
	wg.Wait()
	list, err := s.ListTemplates(ctx, "key_a")
	if err != nil {
		t.Fatal(err)
	}
	if stored != 5 || refused != 15 || len(list) != 5 {
		t.Fatalf("stored %d, refused %d, listed %d; want 5, 15, 5", stored, refused, len(list))
	}
	le := limitOf(t, func() error {
		_, err := s.PutTemplateWithin(ctx, newTemplate("key_a", "one-more"), lim)
		return err
	}())
	if le.Limit != store.LimitTemplates || le.Max != 5 || le.Used != 5 {
		t.Errorf("refusal = %+v, want templates 5 of 5", le)
	}
	// Another owner is not affected; a replacement is no creation.
	if _, err := s.PutTemplateWithin(ctx, newTemplate("key_b", "one"), lim); err != nil {
		t.Errorf("another owner's template: %v", err)
	}
	if _, err := s.PutTemplateWithin(ctx, newTemplate("key_a", list[0].Name), lim); err != nil {
		t.Errorf("replacing at the limit: %v", err)
	}
	if err := s.DeleteTemplate(ctx, "key_a", list[0].Name); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutTemplateWithin(ctx, newTemplate("key_a", "after-delete"), lim); err != nil {
		t.Errorf("creating after a delete freed a place: %v", err)
	}
}

// bigTemplate is a template whose stored JSON is about n bytes.
func bigTemplate(owner, name string, n int) *template.Template {
	tp := newTemplate(owner, name)
	tp.Values = map[string]string{"pad": strings.Repeat("x", n)}
	return tp
}

func TestTemplateByteAndScheduleLimits(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	lim := store.TemplateLimits{Bytes: 10_000, Schedules: 1}
	if _, err := s.PutTemplateWithin(ctx, bigTemplate("key_a", "a", 4000), lim); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutTemplateWithin(ctx, bigTemplate("key_a", "b", 4000), lim); err != nil {
		t.Fatal(err)
	}
	u, err := s.TemplateUsageOf(ctx, "key_a")
	if err != nil || u.Templates != 2 || u.Bytes < 8000 || u.Bytes > 10_000 {
		t.Fatalf("usage = %+v, %v; want 2 templates of 8000-10000 bytes", u, err)
	}
	_, err = s.PutTemplateWithin(ctx, bigTemplate("key_a", "c", 4000), lim)
	if le := limitOf(t, err); le.Limit != store.LimitTemplateBytes || le.Max != 10_000 || le.Used != u.Bytes {
		t.Errorf("third template: %+v, want template bytes %d of 10000", le, u.Bytes)
	}
	// Growing a template past the limit is refused; shrinking is not.
	_, err = s.PutTemplateWithin(ctx, bigTemplate("key_a", "a", 7000), lim)
	if le := limitOf(t, err); le.Limit != store.LimitTemplateBytes {
		t.Errorf("growing a: %+v, want template bytes", le)
	}
	if _, err := s.PutTemplateWithin(ctx, bigTemplate("key_a", "a", 100), lim); err != nil {
		t.Errorf("shrinking a: %v", err)
	}
	if u, _ := s.TemplateUsageOf(ctx, "key_a"); u.Bytes > 6000 {
		t.Errorf("usage after shrinking = %+v, want under 6000 bytes", u)
	}

	sched := func(name string) *template.Template {
		tp := newTemplate("key_a", name)
		tp.Schedule = &template.Schedule{Cron: "0 3 * * *"}
		return tp
	}
	if _, err := s.PutTemplateWithin(ctx, sched("a"), lim); err != nil {
		t.Fatalf("first schedule: %v", err)
	}
	_, err = s.PutTemplateWithin(ctx, sched("b"), lim)
	if le := limitOf(t, err); le.Limit != store.LimitSchedules || le.Used != 1 || le.Max != 1 {
		t.Errorf("second schedule: %+v, want schedules 1 of 1", le)
	}
	if _, err := s.PutTemplateWithin(ctx, sched("a"), lim); err != nil {
		t.Errorf("replacing the scheduled template: %v", err)
	}
	if _, err := s.PutTemplateWithin(ctx, newTemplate("key_a", "a"), lim); err != nil {
		t.Fatalf("dropping a's schedule: %v", err)
	}
	if _, err := s.PutTemplateWithin(ctx, sched("b"), lim); err != nil {
		t.Errorf("a schedule once a's was dropped: %v", err)
	}
}

// TestTemplatesForRepository: the index finds a repository's templates
// without case, follows a trigger moved to another repository and a
// delete, and caps how many templates one repository may have.
func TestTemplatesForRepository(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	lim := store.TemplateLimits{PerRepository: 2}
	put := func(owner, name, repo string) error {
		tp := newTemplate(owner, name)
		tp.Triggers.GitHub.Repository = repo
		tp.Triggers.GitLab = &template.GitLabTrigger{Project: repo, Token: "gitlab-token-0123456789"}
		_, err := s.PutTemplateWithin(ctx, tp, lim)
		return err
	}
	for _, p := range [][3]string{{"key_a", "one", "Acme/Shop"}, {"key_b", "two", "acme/shop"}, {"key_a", "other", "acme/shop-admin"}} {
		if err := put(p[0], p[1], p[2]); err != nil {
			t.Fatal(err)
		}
	}
	names := func(provider, repo string) []string {
		list, err := s.TemplatesForRepository(ctx, provider, repo, 0)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tp := range list {
			out = append(out, tp.Owner+"/"+tp.Name)
		}
		return out
	}
	if got := names("github", "ACME/shop"); fmt.Sprint(got) != "[key_a/one key_b/two]" {
		t.Errorf("github acme/shop = %v, want [key_a/one key_b/two]", got)
	}
	if got := names("gitlab", "acme/shop-admin"); fmt.Sprint(got) != "[key_a/other]" {
		t.Errorf("gitlab acme/shop-admin = %v", got)
	}
	le := limitOf(t, put("key_c", "three", "acme/shop"))
	if le.Limit != store.LimitRepositoryTemplates || le.Used != 2 || le.Max != 2 {
		t.Errorf("third template of acme/shop: %+v, want 2 of 2 per repository", le)
	}
	// A template moved to another repository leaves the old one's list.
	if err := put("key_a", "one", "acme/elsewhere"); err != nil {
		t.Fatal(err)
	}
	if got := names("github", "acme/shop"); fmt.Sprint(got) != "[key_b/two]" {
		t.Errorf("after the move: %v, want [key_b/two]", got)
	}
	if err := s.DeleteTemplate(ctx, "key_b", "two"); err != nil {
		t.Fatal(err)
	}
	if got := names("github", "acme/shop"); len(got) != 0 {
		t.Errorf("after the delete: %v, want none", got)
	}
	if got, _ := s.TemplatesForRepository(ctx, "github", "acme/elsewhere", 1); len(got) != 1 {
		t.Errorf("max 1: %d templates", len(got))
	}
}

// TestAccountTemplates: templates stored before usages were kept are
// counted and indexed by the backfill, once.
func TestAccountTemplates(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	if _, err := s.PutTemplate(ctx, newTemplate("key_a", "old")); err != nil {
		t.Fatal(err)
	}
	// As an older version left it: the template and its listing only.
	if err := rdb.Del(ctx, "benchq:{templates}:usage:key_a", "benchq:{templates}:repos").Err(); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TemplatesForRepository(ctx, "github", "acme/shop", 0); len(got) != 0 {
		t.Fatalf("setup: the index still finds %d templates", len(got))
	}
	if n, err := s.AccountTemplates(ctx); n != 1 || err != nil {
		t.Fatalf("AccountTemplates = %d, %v; want 1", n, err)
	}
	if n, err := s.AccountTemplates(ctx); n != 0 || err != nil {
		t.Fatalf("AccountTemplates again = %d, %v; want 0", n, err)
	}
	if got, _ := s.TemplatesForRepository(ctx, "github", "acme/shop", 0); len(got) != 1 {
		t.Errorf("after the backfill the index finds %d templates, want 1", len(got))
	}
	if u, _ := s.TemplateUsageOf(ctx, "key_a"); u.Templates != 1 || u.Bytes == 0 {
		t.Errorf("usage after the backfill = %+v", u)
	}
}

func TestPinLimit(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for i := range 4 {
		mustCreate(t, s, newJob(fmt.Sprintf("p%d", i), "key_a", i, nil))
	}
	mustCreate(t, s, newJob("other", "key_b", 9, nil))
	for _, id := range []string{"p0", "p1", "p1"} {
		if _, err := s.PinJobWithin(ctx, id, true, 2); err != nil {
			t.Fatalf("pin %s: %v", id, err)
		}
	}
	_, err := s.PinJobWithin(ctx, "p2", true, 2)
	if le := limitOf(t, err); le.Limit != store.LimitPins || le.Used != 2 || le.Max != 2 {
		t.Errorf("third pin: %+v, want pinned jobs 2 of 2", le)
	}
	if j, err := s.GetJob(ctx, "p2"); err != nil || j.Pinned {
		t.Errorf("refused pin left the job pinned: %+v, %v", j, err)
	}
	if _, err := s.PinJobWithin(ctx, "other", true, 2); err != nil {
		t.Errorf("another owner's pin: %v", err)
	}
	if _, err := s.PinJobWithin(ctx, "p0", false, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PinJobWithin(ctx, "p2", true, 2); err != nil {
		t.Errorf("pin after an unpin freed a place: %v", err)
	}
	if n, _ := s.PinnedJobs(ctx, "key_a"); n != 2 {
		t.Errorf("PinnedJobs = %d, want 2", n)
	}
}

// TestTemplateUsageReclaimsLeaks: a usage whose template never got
// written (past the grace period) is given back when the owner is at its
// limit; one recorded just now, whose write may be under way, is not.
func TestTemplateUsageReclaimsLeaks(t *testing.T) {
	s, rdb := newStore(t)
	ctx := t.Context()
	lim := store.TemplateLimits{Templates: 2}
	// The layout of keys.go: a usage 2 minutes old, and one just now,
	// both without their template.
	old := time.Now().Add(-2 * time.Minute).UnixMilli()
	usage := "benchq:{templates}:usage:key_a"
	rdb.HSet(ctx, usage, "leaked", fmt.Sprintf("100 0 acme/leak - tok1 %d", old))
	rdb.HSet(ctx, usage, "writing", fmt.Sprintf("100 0 - - tok2 %d", time.Now().UnixMilli()))
	rdb.ZAdd(ctx, "benchq:{templates}:repos", redis.Z{Member: "github acme/leak key_a/leaked"})
	if _, err := s.PutTemplateWithin(ctx, newTemplate("key_a", "real"), lim); err != nil {
		t.Fatalf("a template over a leaked usage: %v", err)
	}
	if got, _ := s.TemplatesForRepository(ctx, "github", "acme/leak", 0); len(got) != 0 {
		t.Errorf("the leaked usage's repository entry is left")
	}
	le := limitOf(t, func() error {
		_, err := s.PutTemplateWithin(ctx, newTemplate("key_a", "third"), lim)
		return err
	}())
	if le.Limit != store.LimitTemplates || le.Used != 2 {
		t.Errorf("refusal = %+v, want templates 2 of 2: the fresh usage is within its grace period", le)
	}
}
