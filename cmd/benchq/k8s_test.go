package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/benchq/benchq/internal/config"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/queue"
	"github.com/benchq/benchq/internal/redistest"
)

// deployDir is the Kubernetes manifests' directory, from this package.
const deployDir = "../../deploy"

// kustomization is the part of kustomize's Kustomization the manifests use,
// decoded strictly: a field outside it is a mistake or needs this test
// extended. (sigs.k8s.io/kustomize/api would pull in kustomize itself.)
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
	} `json:"images"`
}

// KEDA's ScaledObject and TriggerAuthentication, reduced to the fields
// KEDA documents for them, decoded strictly. KEDA's own API package
// (github.com/kedacore/keda/v2) would add controller-runtime and a few
// hundred modules to go.sum for two small types.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		PollingInterval *int32 `json:"pollingInterval,omitempty"`
		CooldownPeriod  *int32 `json:"cooldownPeriod,omitempty"`
		MinReplicaCount *int32 `json:"minReplicaCount,omitempty"`
		MaxReplicaCount *int32 `json:"maxReplicaCount,omitempty"`
		Advanced        *struct {
			HorizontalPodAutoscalerConfig *struct {
				Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
			} `json:"horizontalPodAutoscalerConfig,omitempty"`
			ScalingModifiers *struct {
				Formula          string `json:"formula"`
				Target           string `json:"target"`
				ActivationTarget string `json:"activationTarget,omitempty"`
				MetricType       string `json:"metricType,omitempty"`
			} `json:"scalingModifiers,omitempty"`
		} `json:"advanced,omitempty"`
		Triggers []struct {
			Type              string            `json:"type"`
			Name              string            `json:"name,omitempty"`
			Metadata          map[string]string `json:"metadata"`
			AuthenticationRef *struct {
				Name string `json:"name"`
			} `json:"authenticationRef,omitempty"`
		} `json:"triggers"`
	} `json:"spec"`
}

type triggerAuthentication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretTargetRef []struct {
			Parameter string `json:"parameter"`
			Name      string `json:"name"`
			Key       string `json:"key"`
		} `json:"secretTargetRef"`
	} `json:"spec"`
}

// kinds are the objects the manifests may hold, by apiVersion and kind.
var kinds = map[string]func() any{
	"v1/Namespace":                                  func() any { return &corev1.Namespace{} },
	"v1/Service":                                    func() any { return &corev1.Service{} },
	"v1/Secret":                                     func() any { return &corev1.Secret{} },
	"apps/v1/Deployment":                            func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                           func() any { return &appsv1.StatefulSet{} },
	"networking.k8s.io/v1/NetworkPolicy":            func() any { return &networkingv1.NetworkPolicy{} },
	"autoscaling/v2/HorizontalPodAutoscaler":        func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
	"keda.sh/v1alpha1/ScaledObject":                 func() any { return &scaledObject{} },
	"keda.sh/v1alpha1/TriggerAuthentication":        func() any { return &triggerAuthentication{} },
	"kustomize.config.k8s.io/v1beta1/Kustomization": func() any { return &kustomization{} },
}

// object is one decoded manifest document.
type object struct {
	file string
	meta metav1.ObjectMeta
	obj  any
}

func (o object) String() string { return fmt.Sprintf("%s: %T %s", o.file, o.obj, o.meta.Name) }

// decodeManifests splits each file into its YAML documents and decodes each
// strictly into the type of its kind: an unknown or duplicated field, an
// unknown kind or a value of the wrong type is an error.
func decodeManifests(files map[string][]byte) ([]object, []error) {
	var objs []object
	var errs []error
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(files[name])))
		for i := 1; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				break
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				errs = append(errs, fmt.Errorf("%s document %d: %w", name, i, err))
				continue
			}
			if tm == (metav1.TypeMeta{}) {
				continue // comments only
			}
			newObj, ok := kinds[tm.APIVersion+"/"+tm.Kind]
			if !ok {
				errs = append(errs, fmt.Errorf("%s document %d: unknown kind %s %s", name, i, tm.APIVersion, tm.Kind))
				continue
			}
			obj := newObj()
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				errs = append(errs, fmt.Errorf("%s document %d (%s): %w", name, i, tm.Kind, err))
				continue
			}
			o := object{file: name, obj: obj}
			if m, ok := obj.(metav1.Object); ok {
				o.meta = metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), Labels: m.GetLabels()}
				for _, e := range validation.IsDNS1123Subdomain(m.GetName()) {
					errs = append(errs, fmt.Errorf("%s: name %q: %s", o, m.GetName(), e))
				}
			}
			objs = append(objs, o)
		}
	}
	return objs, errs
}

// readDeploy reads every manifest under deploy/ by its path there.
func readDeploy(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(deployDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(deployDir, path)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// live is what the manifests are checked against in a running benchq:
// the API's answers and the keys asynq uses in Redis.
type live struct {
	get       func(path string) (int, string) // GET on `benchq serve`
	listLen   func(key string) int64          // LLEN in its Redis
	secretVal string                          // what every secretKeyRef resolves to
}

// TestKubernetesManifests decodes every manifest under deploy/ strictly
// into the Kubernetes API types (KEDA's into local types, see
// scaledObject) and cross-checks them against benchq itself: commands and
// flags through config.Load, BENCHQ_* variables against the command's own
// flag set, probe paths and metric names against a running `benchq serve`,
// the KEDA list names against the lists asynq fills in a real Redis, and
// the egress NetworkPolicy against the address policy the workers enforce.
// Mutated copies of the manifests must each fail, so every check is seen
// failing.
func TestKubernetesManifests(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lv := startLive(t)
	files := readDeploy(t)
	if errs := checkManifests(files, readme, lv); len(errs) > 0 {
		for _, e := range errs {
			t.Error(e)
		}
	}

	t.Run("kustomize build", func(t *testing.T) {
		if _, err := exec.LookPath("kubectl"); err != nil {
			t.Skip("kubectl not installed; the kustomization's resources are checked above")
		}
		out, err := exec.CommandContext(t.Context(), "kubectl", "kustomize", deployDir).Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v", deployDir, err)
		}
		objs, errs := decodeManifests(map[string][]byte{"kustomize-build.yaml": out})
		for _, e := range errs {
			t.Error(e)
		}
		for _, o := range objs {
			if _, ns := o.obj.(*corev1.Namespace); !ns && o.meta.Namespace != "benchq" {
				t.Errorf("%s: built into namespace %q, want benchq", o, o.meta.Namespace)
			}
		}
	})

	mutations := []struct {
		name, file, old, new, want string
	}{
		{"unknown field", "worker.yaml", "  replicas: 3", "  replica: 3", `unknown field "replica"`},
		{"unknown kind", "namespace.yaml", "kind: Namespace", "kind: Namespaces", "unknown kind"},
		{"wrong type", "api.yaml", "containerPort: 8080", "containerPort: http", "cannot unmarshal"},
		{"no such subcommand", "worker.yaml", `args: ["worker"]`, `args: ["wrker"]`, "unexpected argument"},
		{"flag of the other command", "worker.yaml", `args: ["worker"]`, `args: ["worker", "--addr", ":1"]`, "flag provided but not defined"},
		{"serve in the worker", "worker.yaml", `args: ["worker"]`, `args: ["serve"]`, "runs serve"},
		{"unknown variable", "worker.yaml", "name: BENCHQ_WORKERS", "name: BENCHQ_WORKER", "BENCHQ_WORKER is not a variable"},
		{"variable of the other command", "api.yaml", "name: BENCHQ_LOG_FORMAT\n              value: json", "name: BENCHQ_WORKERS\n              value: \"1\"", "BENCHQ_WORKERS is not a variable of benchq serve"},
		{"two jobs per worker", "worker.yaml", `value: "1"`, `value: "2"`, "runs 2 jobs at once"},
		{"literal password", "worker.yaml", "$(REDIS_PASSWORD)@", "hunter2@", "literal password"},
		{"undefined reference", "api.yaml", "$(REDIS_PASSWORD)@", "$(REDIS_PASS)@", "$(REDIS_PASS)"},
		{"redis host", "api.yaml", "@benchq-redis:6379", "@redis:6379", "no Service redis"},
		{"probe path", "api.yaml", "path: /readyz", "path: /ready", "/ready answered 404"},
		{"probe port", "api.yaml", "port: http\n            periodSeconds: 5", "port: metrics\n            periodSeconds: 5", `no container port "metrics"`},
		{"listen port", "api.yaml", `"0.0.0.0:8080"`, `"0.0.0.0:9090"`, "listens on port 9090"},
		{"service selector", "api.yaml", "    app.kubernetes.io/component: api\n  ports:", "    app.kubernetes.io/component: apis\n  ports:", "selects no pod"},
		{"service target port", "redis.yaml", "targetPort: redis", "targetPort: 6380", "port 6380"},
		{"anti-affinity", "worker.yaml", "topologyKey: kubernetes.io/hostname\n              labelSelector", "topologyKey: topology.kubernetes.io/zone\n              labelSelector", "anti-affinity"},
		{"root", "worker.yaml", "runAsNonRoot: true", "runAsNonRoot: false", "runAsNonRoot"},
		{"grace period", "worker.yaml", "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 20", "terminationGracePeriodSeconds 20"},
		{"no memory limit", "worker.yaml", "limits:\n              memory: 512Mi", "limits:\n              cpu: \"1\"", "memory limit"},
		{"secret not created", "redis.yaml", "key: password\n            # redis-cli", "key: pass\n            # redis-cli", "benchq-redis/pass"},
		{"keda target", "autoscaling/keda.yaml", "name: benchq-worker\n  pollingInterval", "name: benchq-api\n  pollingInterval", "scales Deployment benchq-api"},
		{"keda list", "autoscaling/keda.yaml", "listName: asynq:{jobs}:pending", "listName: asynq:{default}:pending", "asynq:{default}:pending holds 0"},
		{"keda address", "autoscaling/keda.yaml", "address: benchq-redis.benchq.svc:6379\n        databaseIndex: \"0\"\n        listName: asynq:{jobs}:active", "address: benchq-redis.benchq.svc:6380\n        databaseIndex: \"0\"\n        listName: asynq:{jobs}:active", "6380"},
		{"keda shards list of no queue", "autoscaling/keda.yaml", "listName: asynq:{shards}:active", "listName: asynq:{shard}:active", "asynq:{shard}:active holds 0"},
		{"keda shards not read", "autoscaling/keda.yaml", "listName: asynq:{shards}:pending", "listName: asynq:{jobs}:pending", "no trigger reads asynq:{shards}:pending"},
		{"keda formula misses a trigger", "autoscaling/keda.yaml", " + shards_active\n", "\n", "trigger shards_active is named 1 times and summed 0 times"},
		{"keda formula not a sum", "autoscaling/keda.yaml", "jobs_active + shards_pending", "jobs_active * shards_pending", `"jobs_active * shards_pending" is no trigger's name`},
		{"keda formula twice", "autoscaling/keda.yaml", "+ shards_active\n", "+ shards_active + jobs_active\n", "trigger jobs_active is named 1 times and summed 2 times"},
		{"keda trigger unnamed", "autoscaling/keda.yaml", "      name: shards_active\n", "", "has no name"},
		{"keda largest trigger", "autoscaling/keda.yaml", "    scalingModifiers:\n      formula: jobs_pending + jobs_active + shards_pending + shards_active\n      target: \"1\"\n      metricType: AverageValue\n", "", "no advanced.scalingModifiers"},
		{"keda modifier field", "autoscaling/keda.yaml", "      metricType: AverageValue", "      metricTyp: AverageValue", `unknown field "metricTyp"`},
		{"keda modifier target", "autoscaling/keda.yaml", "      target: \"1\"", "      target: \"2\"", `target "2"`},
		{"hpa adapter state", "autoscaling/hpa.yaml", `state=~"pending|active"`, `state=~"pending"`, "the adapter rule sums asynq_tasks_enqueued_total"},
		{"hpa adapter queue", "autoscaling/hpa.yaml", `<<.Series>>{queue=~"jobs|shards"`, `<<.Series>>{queue="jobs"`, "the adapter rule sums asynq_tasks_enqueued_total"},
		{"hpa adapter sums replicas", "autoscaling/hpa.yaml", "sum(max by", "sum(sum by", "want ^sum"},
		{"hpa adapter name", "autoscaling/hpa.yaml", "as: benchq_worker_demand", "as: benchq_demand", "no adapter rule in the comment names the metric benchq_worker_demand"},
		{"hpa adapter field", "autoscaling/hpa.yaml", "#       metricsQuery:", "#       metricQuery:", `unknown field "metricQuery"`},
		{"hpa adapter namespace", "autoscaling/hpa.yaml", "#       resources:\n#         overrides: {namespace: {resource: namespace}}\n", "#       resources: {namespaced: false}\n", "does not map the namespace label"},
		{"hpa largest metric", "autoscaling/hpa.yaml", "  metrics:\n", "  metrics:\n    - type: External\n      external:\n        metric:\n          name: benchq_worker_demand\n        target:\n          type: AverageValue\n          averageValue: \"1\"\n", "2 metrics, want one"},
		{"hpa target", "autoscaling/hpa.yaml", "name: benchq-worker\n  minReplicas", "name: worker\n  minReplicas", "scales Deployment worker"},
		{"egress admits private", "networkpolicy.yaml", "              - 10.0.0.0/8\n", "", "10.1.2.3"},
		{"egress refuses public", "networkpolicy.yaml", "              - 100.64.0.0/10\n", "              - 100.0.0.0/8\n", "100.1.2.3"},
		{"manifest not in kustomization", "kustomization.yaml", "  - networkpolicy.yaml\n", "", "networkpolicy.yaml is not"},
		{"literal secret", "namespace.yaml", "name: benchq\n", "name: benchq\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: x\nstringData:\n  password: hunter2\n", "holds data"},
	}
	for _, m := range mutations {
		t.Run("fails on "+m.name, func(t *testing.T) {
			mutated := map[string][]byte{}
			for k, v := range files {
				mutated[k] = v
			}
			if !bytes.Contains(files[m.file], []byte(m.old)) {
				t.Fatalf("%s does not contain %q: update the mutation", m.file, m.old)
			}
			mutated[m.file] = bytes.Replace(files[m.file], []byte(m.old), []byte(m.new), 1)
			errs := checkManifests(mutated, readme, lv)
			for _, e := range errs {
				if strings.Contains(e.Error(), m.want) {
					return
				}
			}
			t.Errorf("mutation %q: no error mentions %q; got %v", m.name, m.want, errs)
		})
	}
}

// startLive starts `benchq serve` on a real redis-server and leaves one
// job:run and one job:shard task pending and one of each active (held by
// a handler that waits for the test's end), so the asynq lists and
// metrics the autoscalers read exist for both queues a worker serves.
func startLive(t *testing.T) live {
	t.Helper()
	rs := redistest.Start(t)
	m := startMain(t, func(c *config.Config) {
		c.Command = config.CommandServe
		c.RedisURL = rs.URL()
	})
	rdb := rs.Client(t)
	client := asynq.NewClientFromRedisClient(rdb)
	t.Cleanup(func() { _ = client.Close() })

	held := make(chan string, 2)
	release := make(chan struct{})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency: 2, Queues: map[string]int{queue.QueueShards: 2, queue.QueueJobs: 1},
		Logger: asynqQuiet{}, LogLevel: asynq.FatalLevel,
	})
	if err := srv.Start(asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
		held <- task.Type()
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	})); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(release); srv.Shutdown() })
	enqueue := func(state string) {
		run, err := queue.NewJobRunTask("k8s-"+state, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		shard, err := queue.NewShardTask(queue.ShardPayload{JobID: "k8s-shard-" + state, Round: "r", Shard: 1, Shards: 2}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range []*asynq.Task{run, shard} {
			if _, err := client.Enqueue(task); err != nil {
				t.Fatal(err)
			}
		}
	}
	enqueue("active")
	var types []string
	for len(types) < 2 {
		select {
		case typ := <-held:
			types = append(types, typ)
		case <-time.After(10 * time.Second):
			t.Fatalf("the asynq server took %v, want a job:run and a job:shard task", types)
		}
	}
	srv.Stop() // take no more: the next two tasks stay pending
	enqueue("pending")
	return live{
		get: func(path string) (int, string) {
			resp, err := http.Get(m.URL() + path)
			if err != nil {
				t.Errorf("GET %s: %v", path, err)
				return 0, ""
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		},
		listLen: func(key string) int64 {
			n, err := rdb.LLen(t.Context(), key).Result()
			if err != nil {
				t.Errorf("LLEN %s: %v", key, err)
			}
			return n
		},
		secretVal: "0123456789abcdef0123456789abcdef",
	}
}

type asynqQuiet struct{}

func (asynqQuiet) Debug(...any) {}
func (asynqQuiet) Info(...any)  {}
func (asynqQuiet) Warn(...any)  {}
func (asynqQuiet) Error(...any) {}
func (asynqQuiet) Fatal(...any) {}

// workload is a Deployment's or StatefulSet's pod template.
type workload struct {
	object
	selector *metav1.LabelSelector
	pod      corev1.PodTemplateSpec
}

// checkManifests returns every problem found in files (deploy/'s, by
// path) against benchq and README.md.
func checkManifests(files map[string][]byte, readme []byte, lv live) []error {
	objs, errs := decodeManifests(files)
	fail := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }

	var kz *kustomization
	var workloads []workload
	services := map[string]*corev1.Service{}
	deployments := map[string]*appsv1.Deployment{}
	var policies []*networkingv1.NetworkPolicy
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *kustomization:
			kz = v
		case *appsv1.Deployment:
			deployments[v.Name] = v
			workloads = append(workloads, workload{o, v.Spec.Selector, v.Spec.Template})
		case *appsv1.StatefulSet:
			workloads = append(workloads, workload{o, v.Spec.Selector, v.Spec.Template})
			if !slices.ContainsFunc(objs, func(p object) bool {
				s, ok := p.obj.(*corev1.Service)
				return ok && s.Name == v.Spec.ServiceName && s.Spec.ClusterIP == corev1.ClusterIPNone
			}) {
				fail("%s: serviceName %q is no headless Service", o, v.Spec.ServiceName)
			}
		case *corev1.Service:
			services[v.Name] = v
		case *corev1.Secret:
			if len(v.Data) > 0 || len(v.StringData) > 0 {
				fail("%s: a Secret in the manifests holds data; secrets are created at install (README.md)", o)
			}
		case *networkingv1.NetworkPolicy:
			policies = append(policies, v)
		}
	}
	if kz == nil {
		return append(errs, errors.New("deploy/kustomization.yaml is missing or does not decode"))
	}

	// Every top-level manifest is applied by `kubectl apply -k deploy/`;
	// deploy/autoscaling/ is applied on its own.
	for name := range files {
		if !strings.Contains(name, "/") && name != "kustomization.yaml" && !slices.Contains(kz.Resources, name) {
			fail("deploy/%s is not in kustomization.yaml's resources", name)
		}
	}
	for _, r := range kz.Resources {
		if _, ok := files[r]; !ok {
			fail("kustomization.yaml lists %s, which does not exist", r)
		}
	}
	benchqImage := ""
	if len(kz.Images) == 1 {
		benchqImage = kz.Images[0].Name
	} else {
		fail("kustomization.yaml has %d images, want the one benchq image", len(kz.Images))
	}

	secrets := readmeSecrets(readme)
	checkSecretRef := func(where, name, key string) {
		if !slices.Contains(secrets, name+"/"+key) {
			fail("%s: Secret key %s/%s is not created by README.md's kubectl create secret (it creates %v)", where, name, key, secrets)
		}
	}

	// redisAddrs are the host:port pairs benchq and KEDA dial for Redis.
	var redisAddrs []string
	for _, w := range workloads {
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.pod.Labels)) {
			fail("%s: selector %v does not match its pod labels %v", w, w.selector, w.pod.Labels)
		}
		spec := w.pod.Spec
		if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
			fail("%s: pod securityContext.runAsNonRoot is not true", w)
		}
		for _, c := range spec.Containers {
			where := fmt.Sprintf("%s container %s", w, c.Name)
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
				fail("%s: securityContext must forbid privilege escalation and drop ALL capabilities", where)
			}
			req, lim := c.Resources.Requests, c.Resources.Limits
			if req.Cpu().IsZero() || req.Memory().IsZero() || lim.Memory().IsZero() || lim.Memory().Cmp(*req.Memory()) < 0 {
				fail("%s: needs cpu and memory requests and a memory limit at least the request, got %v / %v", where, req, lim)
			}
			env := resolveEnv(where, c.Env, lv.secretVal, checkSecretRef, fail)
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
				if p != nil && (p.HTTPGet != nil || p.TCPSocket != nil) {
					port := p.TCPSocket
					if p.HTTPGet != nil {
						port = &corev1.TCPSocketAction{Port: p.HTTPGet.Port}
					}
					if containerPort(c, port.Port) == 0 {
						fail("%s: probe names no container port %q", where, port.Port.String())
					}
				}
			}
			if c.Image != benchqImage {
				continue
			}
			redisAddrs = append(redisAddrs, checkBenchq(where, w, c, env, lv, fail)...)
		}
	}
	for _, addr := range redisAddrs {
		checkServiceAddr("BENCHQ_REDIS_URL", addr, kz.Namespace, services, fail)
	}

	for _, s := range services {
		sel := labels.SelectorFromSet(s.Spec.Selector)
		var pods []workload
		for _, w := range workloads {
			if len(s.Spec.Selector) > 0 && sel.Matches(labels.Set(w.pod.Labels)) {
				pods = append(pods, w)
			}
		}
		if len(pods) != 1 {
			fail("Service %s: selector %v selects no pod template or several (%d)", s.Name, s.Spec.Selector, len(pods))
			continue
		}
		for _, p := range s.Spec.Ports {
			tp := p.TargetPort
			if tp.IntVal == 0 && tp.StrVal == "" {
				tp = intstr.FromInt32(p.Port)
			}
			if !slices.ContainsFunc(pods[0].pod.Spec.Containers, func(c corev1.Container) bool { return containerPort(c, tp) != 0 }) {
				fail("Service %s: port %d targets port %s, which %s does not expose", s.Name, p.Port, tp.String(), pods[0])
			}
		}
	}

	for _, o := range objs {
		switch v := o.obj.(type) {
		case *scaledObject:
			checkScaleTarget(o.String(), v.Spec.ScaleTargetRef.Kind, v.Spec.ScaleTargetRef.Name, deployments, fail)
			checkDemandSum(o.String(), v, fail)
			for _, tr := range v.Spec.Triggers {
				if tr.Type != "redis" {
					fail("%s: trigger type %q, want redis", o, tr.Type)
					continue
				}
				checkServiceAddr(o.String(), tr.Metadata["address"], kz.Namespace, services, fail)
				// asynq's own lists: a task waits in one and runs in the
				// other; startLive left one task in each, on both queues.
				if n := lv.listLen(tr.Metadata["listName"]); n != 1 {
					fail("%s: list %s holds %d tasks with one job:run and one job:shard task pending and one of each active, want 1: not a list asynq fills", o, tr.Metadata["listName"], n)
				}
				if tr.AuthenticationRef == nil || !slices.ContainsFunc(objs, func(p object) bool {
					ta, ok := p.obj.(*triggerAuthentication)
					return ok && ta.Name == tr.AuthenticationRef.Name
				}) {
					fail("%s: trigger's authenticationRef names no TriggerAuthentication", o)
				}
			}
		case *triggerAuthentication:
			for _, r := range v.Spec.SecretTargetRef {
				checkSecretRef(o.String(), r.Name, r.Key)
			}
		case *autoscalingv2.HorizontalPodAutoscaler:
			checkScaleTarget(o.String(), v.Spec.ScaleTargetRef.Kind, v.Spec.ScaleTargetRef.Name, deployments, fail)
			_, metrics := lv.get("/metrics")
			checkAdapterRule(o.String(), files[o.file], v.Spec.Metrics, metrics, fail)
		}
	}

	checkEgress(policies, workloads, fail)
	return errs
}

// resolveEnv resolves a container's environment the way the kubelet does:
// secretKeyRef values from the Secret (val stands in for it), then
// $(NAME) references to variables defined before. A reference left
// unresolved would reach benchq literally.
func resolveEnv(where string, vars []corev1.EnvVar, val string, secretRef func(where, name, key string), fail func(string, ...any)) map[string]string {
	env := map[string]string{}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	for _, e := range vars {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			secretRef(where, e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
			env[e.Name] = val
		case e.ValueFrom != nil:
			fail("%s: env %s: only secretKeyRef is resolved by this test", where, e.Name)
		default:
			if regexp.MustCompile(`(?i)password|secret|token|apikey|_key$|^rediscli_auth$`).MatchString(e.Name) {
				fail("%s: env %s has a literal value; take it from a Secret", where, e.Name)
			}
			env[e.Name] = ref.ReplaceAllStringFunc(e.Value, func(s string) string {
				name := ref.FindStringSubmatch(s)[1]
				v, ok := env[name]
				if !ok {
					fail("%s: env %s refers to %s, not defined before it", where, e.Name, s)
					return s
				}
				return v
			})
		}
	}
	return env
}

// checkBenchq checks a benchq container: its command line and variables
// through benchq's own configuration loader, its probes against the
// running API. It returns the Redis host:port the container dials.
func checkBenchq(where string, w workload, c corev1.Container, env map[string]string, lv live, fail func(string, ...any)) []string {
	if len(c.Command) > 0 {
		fail("%s: command %q replaces the image's benchq entrypoint; give args", where, c.Command)
		return nil
	}
	want := map[string]config.Command{"api": config.CommandServe, "worker": config.CommandWorker}[w.pod.Labels["app.kubernetes.io/component"]]
	if want == "" {
		fail("%s: runs benchq but its component label is neither api nor worker", where)
		return nil
	}
	cfg, err := config.Load(c.Args, func(k string) string { return env[k] })
	if err != nil {
		fail("%s: benchq %q refused: %v", where, c.Args, err)
		return nil
	}
	if cfg.Command != want {
		fail("%s: benchq %q runs %s, want %s", where, c.Args, cfg.Command, want)
	}
	var usage bytes.Buffer
	config.Usage(&usage, cfg.Command)
	for name := range env {
		if strings.HasPrefix(name, "BENCHQ_") && !strings.Contains(usage.String(), "(env "+name+",") {
			fail("%s: %s is not a variable of benchq %s", where, name, cfg.Command)
		}
	}
	if u, err := url.Parse(env["BENCHQ_REDIS_URL"]); err == nil && u.User != nil {
		if p, _ := u.User.Password(); p != lv.secretVal {
			fail("%s: BENCHQ_REDIS_URL carries a literal password; refer to the Secret's variable", where)
		}
	}
	grace := time.Duration(30) * time.Second // the API server's default
	if s := w.pod.Spec.TerminationGracePeriodSeconds; s != nil {
		grace = time.Duration(*s) * time.Second
	}
	if grace <= cfg.ShutdownTimeout {
		fail("%s: terminationGracePeriodSeconds %d is not longer than the shutdown timeout %s", where, int(grace.Seconds()), cfg.ShutdownTimeout)
	}

	switch cfg.Command {
	case config.CommandServe:
		_, port, err := net.SplitHostPort(cfg.Addr)
		n, _ := strconv.Atoi(port)
		if err != nil || len(c.Ports) != 1 || c.Ports[0].ContainerPort != int32(n) {
			fail("%s: benchq listens on port %s, the container exposes %v", where, port, c.Ports)
		}
		if c.ReadinessProbe == nil || c.LivenessProbe == nil {
			fail("%s: the API needs a readiness and a liveness probe", where)
		}
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			if p == nil || p.HTTPGet == nil {
				continue
			}
			if status, _ := lv.get(p.HTTPGet.Path); status != http.StatusOK {
				fail("%s: probe %s answered %d on a running benchq serve, want 200", where, p.HTTPGet.Path, status)
			}
		}
	case config.CommandWorker:
		if cfg.Workers != 1 {
			fail("%s: a worker pod runs %d jobs at once; one benchmark per pod", where, cfg.Workers)
		}
		if !hostAntiAffinity(w) {
			fail("%s: no required pod anti-affinity on kubernetes.io/hostname against its own pods: shards could share a node", where)
		}
	}
	ro, err := config.ParseRedisURL(cfg.RedisURL)
	if err != nil {
		return nil
	}
	return ro.Addrs
}

func hostAntiAffinity(w workload) bool {
	a := w.pod.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return false
	}
	for _, term := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
		if err == nil && term.TopologyKey == corev1.LabelHostname && sel.Matches(labels.Set(w.pod.Labels)) {
			return true
		}
	}
	return false
}

// containerPort resolves a port by name or number among c's ports; 0 when
// c has no such port.
func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort
		}
	}
	return 0
}

// checkServiceAddr checks that addr (host:port, host a Service's name,
// optionally qualified with the namespace) reaches a Service port in
// namespace.
func checkServiceAddr(where, addr, namespace string, services map[string]*corev1.Service, fail func(string, ...any)) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		fail("%s: Redis address %q: %v", where, addr, err)
		return
	}
	name, rest, _ := strings.Cut(host, ".")
	if rest != "" && rest != namespace+".svc" && rest != namespace+".svc.cluster.local" {
		fail("%s: %s is not a Service in namespace %s", where, host, namespace)
	}
	s := services[name]
	if s == nil {
		fail("%s: %s names no Service %s", where, addr, name)
		return
	}
	if !slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port }) {
		fail("%s: Service %s has no port %s", where, name, port)
	}
}

// demandLists are the asynq lists whose lengths add up to the worker pods
// wanted: a worker process runs one task at a time from either queue, and
// a job of k shards holds k of them.
var demandLists = []string{
	"asynq:{" + queue.QueueJobs + "}:pending", "asynq:{" + queue.QueueJobs + "}:active",
	"asynq:{" + queue.QueueShards + "}:pending", "asynq:{" + queue.QueueShards + "}:active",
}

// checkDemandSum checks that the ScaledObject scales on the sum of its
// triggers, one pod per task, and that the triggers read every list in
// demandLists: KEDA's default, the largest trigger, would give a sharded
// job one pod where it needs k.
func checkDemandSum(where string, so *scaledObject, fail func(string, ...any)) {
	var lists []string
	names := map[string]int{}
	for _, tr := range so.Spec.Triggers {
		lists = append(lists, tr.Metadata["listName"])
		if tr.Name == "" {
			fail("%s: trigger on %s has no name for the formula", where, tr.Metadata["listName"])
		}
		names[tr.Name]++
	}
	for _, l := range demandLists {
		if !slices.Contains(lists, l) {
			fail("%s: no trigger reads %s; the pods wanted are the sum of %v", where, l, demandLists)
		}
	}
	if so.Spec.Advanced == nil || so.Spec.Advanced.ScalingModifiers == nil {
		fail("%s: no advanced.scalingModifiers: KEDA would take the largest trigger, not the sum", where)
		return
	}
	sm := so.Spec.Advanced.ScalingModifiers
	if sm.Target != "1" || (sm.MetricType != "" && sm.MetricType != string(autoscalingv2.AverageValueMetricType)) {
		fail("%s: scalingModifiers target %q metricType %q, want \"1\" AverageValue: one pod per task", where, sm.Target, sm.MetricType)
	}
	terms := map[string]int{}
	for _, term := range strings.Split(sm.Formula, "+") {
		terms[strings.TrimSpace(term)]++
	}
	for name, n := range names {
		if n != 1 || terms[name] != 1 {
			fail("%s: trigger %s is named %d times and summed %d times in formula %q, want once each", where, name, n, terms[name])
		}
	}
	for term := range terms {
		if names[term] == 0 {
			fail("%s: formula %q: %q is no trigger's name; the formula must be the triggers' names joined by +", where, sm.Formula, term)
		}
	}
}

// adapterRule is the part of a prometheus-adapter external rule that
// hpa.yaml's comment gives, decoded strictly.
type adapterRule struct {
	SeriesQuery string `json:"seriesQuery"`
	Resources   struct {
		Namespaced *bool `json:"namespaced,omitempty"`
		Overrides  map[string]struct {
			Group    string `json:"group,omitempty"`
			Resource string `json:"resource"`
		} `json:"overrides,omitempty"`
	} `json:"resources"`
	Name struct {
		Matches string `json:"matches,omitempty"`
		As      string `json:"as"`
	} `json:"name"`
	MetricsQuery string `json:"metricsQuery"`
}

// demandQuery is the form the adapter's metricsQuery must take: the max
// over the API replicas (which all report the same queues) per queue and
// state, summed.
var demandQuery = regexp.MustCompile(`^sum\(max by \(queue, state\) \(<<\.Series>>\{(.*),<<\.LabelMatchers>>\}\)\)$`)

// checkAdapterRule checks the HPA's one external metric against the
// prometheus-adapter rule in its file's comment (the lines indented
// "#   "), and that rule's query against the API's /metrics: it must add
// up exactly the asynq gauges of demandLists' queues and states, which
// startLive left at 1 each.
func checkAdapterRule(where string, file []byte, specs []autoscalingv2.MetricSpec, metrics string, fail func(string, ...any)) {
	var block strings.Builder
	for _, line := range strings.Split(string(file), "\n") {
		if rest, ok := strings.CutPrefix(line, "#   "); ok {
			block.WriteString(rest + "\n")
		}
	}
	var cfg struct {
		ExternalRules []adapterRule `json:"externalRules"`
	}
	if err := yaml.UnmarshalStrict([]byte(block.String()), &cfg); err != nil {
		fail("%s: the prometheus-adapter rule in the comment: %v", where, err)
		return
	}
	if len(specs) != 1 || specs[0].External == nil {
		fail("%s: %d metrics, want one external metric: an HPA takes the largest of several, not their sum", where, len(specs))
		return
	}
	name := specs[0].External.Metric.Name
	i := slices.IndexFunc(cfg.ExternalRules, func(r adapterRule) bool { return r.Name.As == name })
	if i < 0 {
		fail("%s: no adapter rule in the comment names the metric %s", where, name)
		return
	}
	r := cfg.ExternalRules[i]
	if t := specs[0].External.Target; t.Type != autoscalingv2.AverageValueMetricType || t.AverageValue == nil || t.AverageValue.String() != "1" {
		fail("%s: target %+v, want AverageValue 1: one pod per task", where, t)
	}
	if r.Resources.Overrides["namespace"].Resource != "namespace" {
		fail("%s: the adapter rule does not map the namespace label: other namespaces' asynq queues would count", where)
	}
	series, _, _ := strings.Cut(r.SeriesQuery, "{")
	m := demandQuery.FindStringSubmatch(r.MetricsQuery)
	if m == nil {
		fail("%s: metricsQuery %q, want %s", where, r.MetricsQuery, demandQuery)
		return
	}
	matcher := regexp.MustCompile(`^(\w+)(=~|=)"([^"]*)"$`)
	var want []func(labels map[string]string) bool
	for _, part := range strings.Split(m[1], ",") {
		mm := matcher.FindStringSubmatch(part)
		if mm == nil {
			fail("%s: metricsQuery matcher %q: this test reads only label=\"v\" and label=~\"re\"", where, part)
			return
		}
		re := regexp.MustCompile("^(?:" + mm[3] + ")$")
		if mm[2] == "=" {
			re = regexp.MustCompile("^" + regexp.QuoteMeta(mm[3]) + "$")
		}
		want = append(want, func(l map[string]string) bool { return re.MatchString(l[mm[1]]) })
	}
	got := map[string]string{} // "queue/state" → value
	line := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + `\{([^}]*)\} (\S+)$`)
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	for _, sm := range line.FindAllStringSubmatch(metrics, -1) {
		l := map[string]string{}
		for _, kv := range label.FindAllStringSubmatch(sm[1], -1) {
			l[kv[1]] = kv[2]
		}
		if !slices.ContainsFunc(want, func(f func(map[string]string) bool) bool { return !f(l) }) {
			got[l["queue"]+"/"+l["state"]] = sm[2]
		}
	}
	wantSeries := map[string]string{}
	for _, l := range demandLists {
		q, state, _ := strings.Cut(strings.TrimPrefix(l, "asynq:{"), "}:")
		wantSeries[q+"/"+state] = "1"
	}
	if !maps.Equal(got, wantSeries) {
		fail("%s: the adapter rule sums %s by queue/state %v on the API's /metrics with one job:run and one job:shard task pending and one of each active, want %v", where, series, got, wantSeries)
	}
}

func checkScaleTarget(where, kind, name string, deployments map[string]*appsv1.Deployment, fail func(string, ...any)) {
	d := deployments[name]
	if kind != "Deployment" || d == nil || d.Spec.Template.Labels["app.kubernetes.io/component"] != "worker" {
		fail("%s: scales %s %s, want the worker Deployment", where, kind, name)
	}
}

// readmeSecrets are the Secret keys (name/key) README.md's `kubectl create
// secret generic` commands create.
func readmeSecrets(readme []byte) []string {
	var out []string
	cmd := regexp.MustCompile(`kubectl(?: -n \S+)? create secret generic (\S+)((?: +--from-(?:literal|file)=[A-Za-z0-9_.-]+=\S+)+)`)
	lit := regexp.MustCompile(`--from-(?:literal|file)=([A-Za-z0-9_.-]+)=`)
	for _, m := range cmd.FindAllSubmatch(readme, -1) {
		for _, k := range lit.FindAllSubmatch(m[2], -1) {
			out = append(out, string(m[1])+"/"+string(k[1]))
		}
	}
	return out
}

// egressProbes are addresses of every class the workers' address policy
// refuses by default, and public ones it admits. The NetworkPolicy that
// applies to benchq's API and worker pods must agree on each.
var egressProbes = []string{
	"0.0.0.1", "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.254", "192.168.1.1",
	"100.64.0.1", "100.127.255.254", "169.254.169.254", "224.0.0.1", "239.255.255.250",
	"240.0.0.1", "255.255.255.254", "192.0.0.1", "198.18.0.1", "198.19.255.254",
	"192.0.2.1", "198.51.100.1", "203.0.113.1",
	"::1", "::", "::a00:1", "fe80::1", "ff02::1", "2001:db8::1", "fd00::1", "fc00::1",
	"64:ff9b::a00:1", "64:ff9b:1::1", "2002:a00:1::1", "2001::1", "::ffff:0:a00:1",
	// Public.
	"1.1.1.1", "8.8.8.8", "100.1.2.3", "100.128.0.1", "172.32.0.1", "192.169.0.1",
	"11.0.0.1", "198.20.0.1", "223.255.255.254",
	"2606:4700:4700::1111", "2a00:1450::1", "2001:4860::8888",
}

// checkEgress compares the egress ipBlocks applying to benchq's API and
// worker pods with the address policy those pods enforce (public plus
// BENCHQ_ALLOW_TARGETS, which the manifests leave empty).
func checkEgress(policies []*networkingv1.NetworkPolicy, workloads []workload, fail func(string, ...any)) {
	guard, err := netguard.New(nil)
	if err != nil {
		fail("netguard: %v", err)
		return
	}
	for _, comp := range []string{"api", "worker"} {
		var pod *workload
		for i := range workloads {
			if workloads[i].pod.Labels["app.kubernetes.io/component"] == comp {
				pod = &workloads[i]
			}
		}
		if pod == nil {
			continue
		}
		var blocks []*networkingv1.IPBlock
		governed := false
		for _, np := range policies {
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil || !sel.Matches(labels.Set(pod.pod.Labels)) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
				continue
			}
			governed = true
			for _, r := range np.Spec.Egress {
				for _, peer := range r.To {
					if peer.IPBlock != nil && len(r.Ports) == 0 {
						blocks = append(blocks, peer.IPBlock)
					}
				}
			}
		}
		if !governed {
			fail("no egress NetworkPolicy applies to the %s pods", comp)
			continue
		}
		for _, s := range egressProbes {
			ip := netip.MustParseAddr(s)
			admitted := guard.CheckIP(ip) == nil
			if got := ipBlocksAdmit(blocks, ip); got != admitted {
				fail("NetworkPolicy egress of the %s pods: %s admitted %t, benchq's address policy admits it %t", comp, s, got, admitted)
			}
		}
	}
}

func ipBlocksAdmit(blocks []*networkingv1.IPBlock, ip netip.Addr) bool {
	for _, b := range blocks {
		p, err := netip.ParsePrefix(b.CIDR)
		if err != nil || !p.Contains(ip) {
			continue
		}
		excluded := slices.ContainsFunc(b.Except, func(e string) bool {
			ep, err := netip.ParsePrefix(e)
			return err == nil && ep.Contains(ip)
		})
		if !excluded {
			return true
		}
	}
	return false
}
