package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/benchq/benchq/internal/template"
)

// PutTemplate stores t under its owner and name, replacing a template of
// that name; created says whether there was none. The store sets
// CreatedAt (kept from the template it replaces) and UpdatedAt. t is not
// validated here (template.Validate). No limit applies (PutTemplateWithin).
func (s *Store) PutTemplate(ctx context.Context, t *template.Template) (created bool, err error) {
	return s.PutTemplateWithin(ctx, t, TemplateLimits{})
}

// PutTemplateWithin is PutTemplate within lim: a template that would take
// its owner past a limit, or its repository past lim.PerRepository, is
// refused with a *LimitError, counted atomically whatever writes run at
// once. A replacement is refused only for what it adds: one that grows
// past the byte limit, or adds a schedule or a repository at its limit.
func (s *Store) PutTemplateWithin(ctx context.Context, t *template.Template, lim TemplateLimits) (created bool, err error) {
	if t == nil || t.Name == "" || t.Owner == "" {
		return false, errors.New("store: put template: no owner or name")
	}
	ref := templateRef(t.Owner, t.Name)
	key := TemplateKey(t.Owner, t.Name)
	now := s.now().UTC()
	sized := *t
	sized.CreatedAt, sized.UpdatedAt = now, now
	size, err := json.Marshal(&sized)
	if err != nil {
		return false, fmt.Errorf("store: put template %s: encode: %w", ref, err)
	}
	// Counted and listed first, so no template exists that no listing or
	// limit sees; a write that fails gives its share back.
	u := usageOf(t, len(size), now)
	prev, err := s.account(ctx, t.Owner, t.Name, u, lim)
	if err != nil {
		return false, fmt.Errorf("store: put template %s: %w", ref, err)
	}
	created, err = s.writeTemplate(ctx, t, key, now)
	if err != nil {
		if uerr := s.unaccount(context.WithoutCancel(ctx), t.Owner, t.Name, u.value, prev); uerr != nil {
			err = errors.Join(err, fmt.Errorf("give back its usage: %w", uerr))
		}
		return false, fmt.Errorf("store: put template %s: %w", ref, err)
	}
	return created, nil
}

// writeTemplate writes t's hash, keeping the CreatedAt of the template it
// replaces.
func (s *Store) writeTemplate(ctx context.Context, t *template.Template, key string, now time.Time) (created bool, err error) {
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		old, err := readTemplate(ctx, tx, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		created = old == nil
		out := *t
		out.CreatedAt, out.UpdatedAt = now, now
		if old != nil {
			out.CreatedAt = old.CreatedAt
		}
		data, err := json.Marshal(&out)
		if err != nil {
			return fmt.Errorf("encode: %w", err)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, fieldTemplate, data, fieldOwner, t.Owner)
			return nil
		})
		if err == nil {
			t.CreatedAt, t.UpdatedAt = out.CreatedAt, out.UpdatedAt
		}
		return err
	}, key)
	if errors.Is(err, redis.TxFailedErr) {
		err = fmt.Errorf("%w: changed concurrently", ErrConflict)
	}
	return created, err
}

// GetTemplate returns owner's template name, or ErrNotFound.
func (s *Store) GetTemplate(ctx context.Context, owner, name string) (*template.Template, error) {
	t, err := readTemplate(ctx, s.rdb, TemplateKey(owner, name))
	if err != nil {
		return nil, fmt.Errorf("store: get template %s: %w", templateRef(owner, name), err)
	}
	return t, nil
}

// DeleteTemplate removes owner's template name, or says ErrNotFound. The
// jobs it created stay.
func (s *Store) DeleteTemplate(ctx context.Context, owner, name string) error {
	n, err := s.rdb.Del(ctx, TemplateKey(owner, name)).Result()
	if err != nil {
		return fmt.Errorf("store: delete template %s: %w", templateRef(owner, name), err)
	}
	s.unlistTemplate(ctx, owner, name)
	s.deleteScheduleState(ctx, owner, name)
	if n == 0 {
		return fmt.Errorf("store: delete template %s: %w", templateRef(owner, name), ErrNotFound)
	}
	return nil
}

// unlistTemplate drops the index entries and the usage of a template
// that is gone, which frees its share of its owner's limits; a failure
// leaves entries that readers skip and the next delete removes.
func (s *Store) unlistTemplate(ctx context.Context, owner, name string) {
	_ = s.unaccount(ctx, owner, name, "", "")
}

// ListTemplates returns owner's templates, by name.
func (s *Store) ListTemplates(ctx context.Context, owner string) ([]*template.Template, error) {
	names, err := s.rdb.SMembers(ctx, ownerTemplatesKey(owner)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: list templates of %s: %w", owner, err)
	}
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = templateRef(owner, n)
	}
	return s.loadTemplates(ctx, refs)
}

// ListAllTemplates returns every owner's templates, by owner and name:
// for the scheduler and the CI hooks, which act for every owner.
func (s *Store) ListAllTemplates(ctx context.Context) ([]*template.Template, error) {
	refs, err := s.rdb.SMembers(ctx, allTemplatesKey()).Result()
	if err != nil {
		return nil, fmt.Errorf("store: list templates: %w", err)
	}
	return s.loadTemplates(ctx, refs)
}

// loadTemplates reads the templates of refs, one pipelined round trip
// (each key its own slot, which a cluster client splits per node),
// skipping refs whose template is gone.
func (s *Store) loadTemplates(ctx context.Context, refs []string) ([]*template.Template, error) {
	sort.Strings(refs)
	cmds := make([]*redis.SliceCmd, len(refs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, ref := range refs {
			owner, name, _ := strings.Cut(ref, "/")
			cmds[i] = p.HMGet(ctx, TemplateKey(owner, name), fieldTemplate, fieldOwner)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("store: load templates: %w", err)
	}
	out := make([]*template.Template, 0, len(refs))
	for i, ref := range refs {
		t, err := decodeTemplate(cmds[i].Val())
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("store: template %s: %w", ref, err)
		}
		out = append(out, t)
	}
	return out, nil
}

type hmgetter interface {
	HMGet(ctx context.Context, key string, fields ...string) *redis.SliceCmd
}

func readTemplate(ctx context.Context, c hmgetter, key string) (*template.Template, error) {
	vals, err := c.HMGet(ctx, key, fieldTemplate, fieldOwner).Result()
	if err != nil {
		return nil, err
	}
	return decodeTemplate(vals)
}

// decodeTemplate reads HMGET template owner.
func decodeTemplate(vals []any) (*template.Template, error) {
	if len(vals) != 2 || vals[0] == nil {
		return nil, ErrNotFound
	}
	data, _ := vals[0].(string)
	owner, _ := vals[1].(string)
	var t template.Template
	if err := json.Unmarshal([]byte(data), &t); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	t.Owner = owner
	return &t, nil
}
