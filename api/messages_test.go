package api

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/benchq/benchq/internal/cihook"
	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/netguard"
	"github.com/benchq/benchq/internal/schedule"
	"github.com/benchq/benchq/internal/store"
	"github.com/benchq/benchq/internal/targetverify"
	"github.com/benchq/benchq/internal/template"
)

// goPrefix matches a Go package prefix ("netguard: ", "json: ") in a text
// meant for a client: the mark of a Go error chain shown as it is.
// A prefix stands first or after another ("…: netguard: resolve…"); a
// word before a colon in a sentence ("jobs of the same template: the
// job…") is not one.
var goPrefix = regexp.MustCompile(`(^|: )(api|job|store|netguard|abcmd|client|worker|targetverify|measure|loadgen|webhook|template|schedule|cihook|apikey|config|queue|report|json|http|strconv|url|x509|tls|pem):\s`)

// nxResolver answers every name as a DNS server does a mistyped one.
type nxResolver struct{}

func (nxResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host", Name: host, Server: "192.0.2.53:53", IsNotFound: true}
}

// checkClientTexts fails t for each text of p a client reads that names
// a Go package.
func checkClientTexts(t *testing.T, what string, p Problem) {
	t.Helper()
	texts := []string{p.Title, p.Detail}
	for _, e := range p.Errors {
		texts = append(texts, e.Message)
	}
	for _, text := range texts {
		if m := goPrefix.FindString(text); m != "" {
			t.Errorf("%s: the client reads %q in %q", what, m, text)
		}
	}
}

// badSpecs are specs wrong in every way the decoder and Validate know:
// each message they produce is read by a client.
var badSpecs = []string{
	`{"targets":[{"url":"http://127.0.0.1:1/"}],"sweep":{"concurency":[2],"requests":[0]}}`,
	`{"targets":[{"url":"http://127.0.0.1:1/"}] "name":"x"}`,
	`{"targets":[{"url":5}],"name":[],"exclusive":"no","sweep":{"duration":["a while"],"requests":[1e3]}}`,
	`{"targets":[{"url":"http://lcalhost:8080/"},{"url":"http://10.0.0.1/"},{"url":"ftp://127.0.0.1/"},{"url":"http://127.0.0.1:99999/"},{"url":"http://127.0.0.1:8o/"},{"url":"http://a b/"}]}`,
	`{"targets":[{"ab":"-n 0 -c 2 http://127.0.0.1:1/"},{"ab":"-X proxy:1 http://127.0.0.1:1/"},{"ab":"-Q http://127.0.0.1:1/"},{"ab":"-n 10 'http://127.0.0.1:1/"}]}`,
	`{"targets":[{"http_load":"-parallel 1 -fetches x","urls":["http://127.0.0.1:1/"]},{"http_load":"-bogus 1"}]}`,
	`{"targets":[{"url":"http://127.0.0.1:1/","request":{"method":"FETCH","http_version":"3","max_body":-1,
		"tls":{"ca":"not a pem","client_cert":"x","min_version":"1.9","cipher_suites":["NOPE"]}}}]}`,
	`{"targets":[{"url":"http://127.0.0.1:1/"}],"thresholds":["p99_ms <","speed > 3","x: p50_ms < 1"],"baseline":"nobody",
		"webhook":{"url":"http://10.0.0.1/","events":["job.exploded"]},"compare_to":{"labels":{"":"x"}},"labels":{"bad key!":"v"}}`,
	`{"targets":[{"url":"http://127.0.0.1:1/"}],"sweep":{"concurrency":[50],"requests":[10],"shards":99,"rate":[-1],"order":"sideways"}}`,
	`{"targets":[{"url":"http://127.0.0.1:1/"}],"trend":{"bogus":1}}`,
	`[1,2]`, ``, `{} {}`, `{"targets":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`,
}

// TestNoProblemNamesAGoPackage produces the problem of every code from
// errors made as the packages that return them make them, and checks
// that no detail or field message a client reads names a Go package. A
// code added without a case here fails the test.
func TestNoProblemNamesAGoPackage(t *testing.T) {
	checker := (&netguard.Checker{Policy: netguard.LoopbackOnly(), Resolver: nxResolver{}}).Check
	var specErrs []error
	for _, body := range badSpecs {
		spec, err := job.Decode(strings.NewReader(body))
		if err == nil {
			err = spec.Validate(job.DefaultLimits(), checker)
		}
		if err == nil {
			t.Fatalf("spec %s is valid; the case tests nothing", body)
		}
		specErrs = append(specErrs, decodeError(err, 1<<20))
	}
	env := newTestEnv(t, func(c *Config) { c.CheckURL = checker })
	var targetErrs []error // as POST /v1/targets/verify checks its URL
	for _, raw := range []string{"http://lcalhost:1/", "http://10.0.0.1/", "http://[fe80::1%25eth0]/", "ftp://127.0.0.1/", "http:///x", "http://a:b@127.0.0.1:8o/", "::"} {
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/v1/targets/verify", nil), httptest.NewRecorder())
		_, err := env.srv.checkTargetURL(c, raw)
		targetErrs = append(targetErrs, err)
	}
	hookErr := func(parse func(string, []byte) (cihook.Event, error), event, body string) error {
		_, err := parse(event, []byte(body))
		return payloadProblem(err)
	}
	format := func(name string) error {
		_, err := reportFormat(&http.Request{URL: &url.URL{RawQuery: "format=" + name}})
		return err
	}
	idemKey := func(key string) error {
		_, err := idempotencyKeyOf(http.Header{idempotencyHeader: {key}})
		return err
	}
	unverified := targetverify.ErrUnverified // its problems are built as a spec's (job.Invalid)
	cases := map[errcode.Code][]error{
		errcode.MalformedBody: {
			job.DecodeBody([]byte(`{"url":"http://127.0.0.1/"`), &VerifyTargetRequest{}),
			job.DecodeBody([]byte(`{"ulr":5}`), &VerifyTargetRequest{}),
			job.DecodeBody([]byte(`{"name":"a","spec":{},"triggers":{"github":{"repositroy":"a/b"}},"schedule":{"jitter":"soon"}}`), &TemplateBody{}),
			decodeError(fmt.Errorf("job: read spec: %w", errors.New("unexpected EOF")), 1<<20),
			hookErr(cihook.ParseGitHub, "push", `{"ref":`),
			hookErr(cihook.ParseGitHub, "push", `{"ref":5}`),
			hookErr(cihook.ParseGitHub, "push", `{"ref":"refs/heads/main","after":"abc"}`),
			hookErr(cihook.ParseGitLab, "Merge Request Hook", `{"object_attributes":{"action":"open"}}`),
		},
		errcode.BodyTooLarge:      {decodeError(&http.MaxBytesError{Limit: 1 << 20}, 1<<20)},
		errcode.InvalidSpec:       append(specErrs, template.Template{Name: "no spaces please", Values: map[string]string{"a b": "x"}}.Validate(), schedule.Validate(&template.Schedule{Cron: "every tuesday", Timezone: "Mars/Olympus"})),
		errcode.InvalidTarget:     targetErrs,
		errcode.TargetUnverified:  {unverified},
		errcode.BadQuery:          {format("docx")},
		errcode.InvalidCursor:     {fmt.Errorf("store: list jobs: %w", store.ErrInvalidCursor)},
		errcode.BadIdempotencyKey: {idemKey(strings.Repeat("k", 300)), idemKey("tab\there")},
		errcode.NotFound:          {fmt.Errorf("api: get job j1: %w", store.ErrNotFound)},
		errcode.Conflict:          {fmt.Errorf("store: update: %w", store.ErrConflict)},
		errcode.StoreUnavailable:  {fmt.Errorf("api: create job: %w", store.ErrUnavailable)},
	}
	produced := map[errcode.Code]bool{}
	for code, errs := range cases {
		for i, err := range errs {
			ce, ok := errcode.Of(err, errcode.StoreUnavailable)
			if !ok {
				t.Errorf("%s case %d: %v has no code", code, i, err)
				continue
			}
			produced[ce.Code] = true
			p, internal, _ := problemFor(err)
			if internal {
				t.Errorf("%s case %d: %v answered as an internal error", code, i, err)
			}
			checkClientTexts(t, fmt.Sprintf("%s case %d", code, i), p)
		}
	}
	// The codes whose every message is a sentence of api's own: the HTTP
	// test below and the source check of TestCodedMessagesShowNoGoError
	// cover them.
	literal := map[errcode.Code]bool{}
	for _, c := range []errcode.Code{
		errcode.UnsupportedMedia, errcode.Unauthorized, errcode.Forbidden, errcode.CrossSiteRequest,
		errcode.MisdirectedRequest, errcode.BadSignature, errcode.JobFinished, errcode.TemplateExists,
		errcode.DeliveryInFlight, errcode.NoDeliveryID, errcode.IdempotencyConflict, errcode.IdempotencyInProgress,
		errcode.TooManyActiveJobs, errcode.RateLimited, errcode.TooManyStreams, errcode.TooManyTemplates,
		errcode.TemplateBytes, errcode.TooManySchedules, errcode.TooManyPins, errcode.RepositoryTemplates,
		errcode.Unavailable,
	} {
		literal[c] = true
	}
	for _, code := range errcode.Codes() {
		if !produced[code] && !literal[code] {
			t.Errorf("code %q has no case: add errors as its package makes them", code)
		}
	}
	for _, err := range []error{storageLimit(&store.LimitError{Limit: store.LimitTemplates, Used: 3, Max: 3})} {
		p, _, _ := problemFor(err)
		checkClientTexts(t, "storage limit", p)
	}
}

// TestProblemsOverHTTPNameNoGoPackage sends requests each refused in its
// own way through the API and reads every problem as a client does.
func TestProblemsOverHTTPNameNoGoPackage(t *testing.T) {
	checker := (&netguard.Checker{Policy: netguard.LoopbackOnly(), Resolver: nxResolver{}}).Check
	env := newTestEnv(t, func(c *Config) { c.CheckURL = checker })
	type request struct{ method, path, body string }
	reqs := []request{
		{http.MethodGet, "/v1/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV", ""},
		{http.MethodGet, "/v1/jobs?limit=many", ""},
		{http.MethodGet, "/v1/jobs?status=sleeping", ""},
		{http.MethodGet, "/v1/jobs?label=nocolon", ""},
		{http.MethodDelete, "/v1/jobs", ""},
		{http.MethodGet, "/v1/nowhere", ""},
		{http.MethodPost, "/v1/jobs", strings.Repeat(" ", 2<<20)},
		{http.MethodPost, "/v1/templates", `{"name":"a","spec":{"targets":[{"url":"http://127.0.0.1:1/"}]},"valus":{}}`},
		{http.MethodPost, "/v1/targets/verify", `{"ulr":"http://127.0.0.1:1/"}`},
	}
	for _, body := range badSpecs {
		reqs = append(reqs, request{http.MethodPost, "/v1/jobs", body})
	}
	for _, r := range reqs {
		resp, b := env.do(t, r.method, r.path, r.body)
		if resp.StatusCode < 400 {
			t.Errorf("%s %s = %d, want a problem", r.method, r.path, resp.StatusCode)
			continue
		}
		checkClientTexts(t, r.method+" "+r.path+" "+strconv.Quote(r.body[:min(len(r.body), 60)]), problem(t, resp, b))
	}
	req, _ := http.NewRequest(http.MethodPost, env.url+"/v1/jobs", strings.NewReader(`{}`)) // no Content-Type
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := make([]byte, 4096)
	n, _ := resp.Body.Read(b)
	checkClientTexts(t, "cross-site POST", problem(t, resp, b[:n]))
}

// TestCodedMessagesShowNoGoError reads the module's source: a coded
// error's message, which clients read, is a sentence, never a Go error's
// text (an err formatted into it, or err.Error()), and names no package.
func TestCodedMessagesShowNoGoError(t *testing.T) {
	errLike := regexp.MustCompile(`^\w*[eE]rr(\.Error\(\))?$`)
	fset := token.NewFileSet()
	root := filepath.Join("..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "internal/errcode") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "errcode" {
				return true
			}
			var msgArgs []ast.Expr
			switch sel.Sel.Name {
			case "New", "Newf", "Sentinel":
				msgArgs = call.Args[1:]
			case "Wrap", "Wrapf":
				msgArgs = call.Args[2:]
			default:
				return true
			}
			checked++
			for _, a := range msgArgs {
				text := string(src[fset.Position(a.Pos()).Offset:fset.Position(a.End()).Offset])
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && goPrefix.MatchString(s) {
						t.Errorf("%s: a coded message names a package: %s", fset.Position(a.Pos()), text)
					}
				}
				if errLike.MatchString(text) {
					t.Errorf("%s: a coded message shows a Go error's text (%s); write a sentence and keep the error as the cause (errcode.Wrap)", fset.Position(a.Pos()), text)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Errorf("checked %d coded errors; the walk missed the module", checked)
	}
}
