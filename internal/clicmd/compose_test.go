package clicmd

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/benchq/benchq/internal/config"
)

// TestComposeFile validates docker-compose.yml against the Compose schema
// (there is no Docker engine in CI) and checks that every benchq command in
// it is one benchq accepts, with the service's own environment.
func TestComposeFile(t *testing.T) {
	path, err := filepath.Abs("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	project, err := loader.LoadWithContext(t.Context(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(path),
		ConfigFiles: []types.ConfigFile{{Filename: path, Content: content}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) { o.SetProjectName("benchq", true) })
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	redis, ok := project.Services["redis"]
	if !ok || redis.Image != "redis:7" || redis.HealthCheck == nil {
		t.Fatalf("service redis = %+v, want redis:7 with a healthcheck", redis)
	}
	if w := project.Services["worker"]; w.Deploy == nil || w.Deploy.Replicas == nil || *w.Deploy.Replicas != 3 {
		t.Errorf("worker replicas = %v, want 3", w.Deploy)
	}
	for name, want := range map[string]config.Command{"api": config.CommandServe, "worker": config.CommandWorker} {
		svc, ok := project.Services[name]
		if !ok {
			t.Fatalf("docker-compose.yml has no %s service", name)
		}
		if svc.Build == nil || svc.Image != "benchq:latest" {
			t.Errorf("service %s: build %v, image %q, want built from the Dockerfile as benchq:latest", name, svc.Build, svc.Image)
		}
		cfg, err := config.Load(svc.Command, envOf(svc))
		if err != nil {
			t.Errorf("service %s: benchq %q refused: %v", name, svc.Command, err)
		} else if cfg.Command != want {
			t.Errorf("service %s: benchq %q runs %s, want %s", name, svc.Command, cfg.Command, want)
		}
		if svc.HealthCheck != nil && len(svc.HealthCheck.Test) > 2 {
			hc := svc.HealthCheck.Test // CMD, /usr/local/bin/benchq, healthcheck, flags...
			if hc[0] != "CMD" || filepath.Base(hc[1]) != "benchq" || hc[2] != "healthcheck" {
				t.Errorf("service %s healthcheck = %q, want CMD benchq healthcheck ...", name, hc)
			} else if _, _, err := healthcheckFlags(hc[3:], io.Discard); err != nil {
				t.Errorf("service %s healthcheck %q refused: %v", name, hc, err)
			}
		}
	}
	if api := project.Services["api"]; api.HealthCheck == nil {
		t.Error("service api has no healthcheck")
	}
}

func envOf(svc types.ServiceConfig) func(string) string {
	return func(k string) string {
		if v, ok := svc.Environment[k]; ok && v != nil {
			return *v
		}
		return ""
	}
}
