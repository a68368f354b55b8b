package store_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/template"
)

func newTemplate(owner, name string) *template.Template {
	return &template.Template{
		Name:  name,
		Owner: owner,
		Spec:  job.Spec{Targets: []job.Target{{Name: "a", URL: "{{target_url}}"}}},
		Triggers: template.Triggers{GitHub: &template.GitHubTrigger{
			Repository: "acme/shop", Branches: []string{"main"}, Secret: "0123456789abcdef-secret"}},
	}
}

func TestTemplatesAreOwnerScoped(t *testing.T) {
	s, _ := newStore(t)
	ctx := t.Context()
	for _, tp := range []*template.Template{newTemplate("key_a", "one"), newTemplate("key_a", "two"), newTemplate("key_b", "one")} {
		created, err := s.PutTemplate(ctx, tp)
		if err != nil || !created {
			t.Fatalf("PutTemplate(%s/%s) = %v, %v; want created", tp.Owner, tp.Name, created, err)
		}
	}
	// Replacing keeps the creation time and reports no creation.
	first, err := s.GetTemplate(ctx, "key_a", "one")
	if err != nil {
		t.Fatal(err)
	}
	again := newTemplate("key_a", "one")
	again.Values = map[string]string{"path": "/"}
	if created, err := s.PutTemplate(ctx, again); err != nil || created {
		t.Fatalf("PutTemplate(replace) = %v, %v; want not created", created, err)
	}
	got, err := s.GetTemplate(ctx, "key_a", "one")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(first.CreatedAt) || got.Values["path"] != "/" || got.Owner != "key_a" {
		t.Errorf("replaced template = %+v, want created %v, values.path /, owner key_a", got, first.CreatedAt)
	}
	if got.Triggers.GitHub.Secret != "0123456789abcdef-secret" {
		t.Errorf("stored secret lost: the hooks need it")
	}

	tests := []struct {
		owner string
		want  []string
	}{
		{"key_a", []string{"one", "two"}},
		{"key_b", []string{"one"}},
		{"key_c", nil},
	}
	for _, tt := range tests {
		list, err := s.ListTemplates(ctx, tt.owner)
		if err != nil {
			t.Fatal(err)
		}
		if names := templateNames(list); !slices.Equal(names, tt.want) {
			t.Errorf("ListTemplates(%s) = %v, want %v", tt.owner, names, tt.want)
		}
	}
	if _, err := s.GetTemplate(ctx, "key_b", "two"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTemplate(another owner's name) = %v, want ErrNotFound", err)
	}
	all, err := s.ListAllTemplates(ctx)
	if err != nil || len(all) != 3 {
		t.Fatalf("ListAllTemplates = %d, %v; want 3", len(all), err)
	}
	if err := s.DeleteTemplate(ctx, "key_a", "one"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTemplate(ctx, "key_a", "one"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second DeleteTemplate = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTemplate(ctx, "key_a", "one"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetTemplate(deleted) = %v, want ErrNotFound", err)
	}
	if all, _ := s.ListAllTemplates(ctx); len(all) != 2 {
		t.Errorf("ListAllTemplates after delete = %d, want 2", len(all))
	}
}

func templateNames(list []*template.Template) []string {
	var out []string
	for _, t := range list {
		out = append(out, t.Name)
	}
	return out
}
