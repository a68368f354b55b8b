package job

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/benchq/benchq/internal/testservers"
	"github.com/google/go-cmp/cmp"
)

func TestRedactURL(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://127.0.0.1:8081/x", "http://127.0.0.1:8081/x"},
		{"http://user:s3cret@127.0.0.1:8o/", "http://xxxxx@127.0.0.1:8o/"},
		{"http://s3cret@/x", "http://xxxxx@/x"},
		{"http://a@b:s3cret@host/p@q", "http://xxxxx@host/p@q"},
		{"user:s3cret@host", "xxxxx@host"},
		{"http://host/path?u=a@b", "http://host/path?u=a@b"},
		{"http://host/p?access_token=s3cret&n=1", "http://host/p?access_token=xxxxx&n=1"},
		{"http://host/p?n=1&API%5FKEY=s3cret#frag", "http://host/p?n=1&API%5FKEY=xxxxx#frag"},
		{"http://u:s3cret@host/p?sig=x&signature=s3cret&token", "http://xxxxx@host/p?sig=x&signature=xxxxx&token"},
		{"http://host/p?page=2&q=a%zz", "http://host/p?page=2&q=a%zz"},
		{"http://host/p#token=s3cret", "http://host/p#token=s3cret"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := RedactURL(tt.raw); got != tt.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

func TestSecretHeader(t *testing.T) {
	tests := []struct {
		name   string
		secret bool
	}{
		{"Authorization", true},
		{"authorization", true},
		{"PROXY-AUTHORIZATION", true},
		{"Cookie", true},
		{"Set-Cookie", true},
		{"X-Api-Key", true},
		{"x-api-KEY", true},
		{"X-Auth-Token", true},
		{"X-Csrf-Token", true},
		{"X-Client-Secret", true},
		{"X-Password", true},
		{"X-Passwd", true},
		{"X-Session-Id", true},
		{"X-Hub-Signature-256", true},
		{"X-Amz-Security-Token", true},
		{"X-Credentials", true},
		{"Accept", false},
		{"Accept-Encoding", false},
		{"Content-Type", false},
		{"Host", false},
		{"User-Agent", false},
		{"Keep-Alive", false},
		{"X-Request-Id", false},
		{"X-Forwarded-For", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := SecretHeader(tt.name); got != tt.secret {
			t.Errorf("SecretHeader(%q) = %v, want %v", tt.name, got, tt.secret)
		}
	}
}

func TestRedactABLine(t *testing.T) {
	const u = "http://127.0.0.1:8081/"
	tests := []struct{ name, line, want string }{
		{"no secret", "-n 10 -c 2 -k " + u, "-n 10 -c 2 -k " + u},
		{"empty", "", ""},
		{"authorization header", "-n 10 -H 'Authorization: Bearer s3cr3t' " + u,
			"-n 10 -H 'Authorization: [redacted]' " + u},
		{"lower case, no space, double quotes", `-H "authorization:Bearer s3cr3t" ` + u,
			"-H 'authorization: [redacted]' " + u},
		{"escaped blanks", `-H Authorization:\ Bearer\ s3cr3t -n 1 ` + u,
			"-H 'Authorization: [redacted]' -n 1 " + u},
		{"joined -H", "'-HX-Api-Key: s3cr3t' " + u, "'-HX-Api-Key: [redacted]' " + u},
		{"other headers kept as written", `-H "Accept: */*"  -H 'x-auth-token: s3cr3t'	-H X-Trace:1 ` + u,
			`-H "Accept: */*"  -H 'x-auth-token: [redacted]'	-H X-Trace:1 ` + u},
		{"header without colon", "-H 'X-Token s3cr3t' " + u, "-H '[redacted]' " + u},
		{"-A", "-A user:s3cr3t " + u, "-A '[redacted]' " + u},
		{"-A joined", "-Auser:s3cr3t " + u, "'-A[redacted]' " + u},
		{"-A after switches", "-kA user:s3cr3t -c 2 -n 4 " + u, "-kA '[redacted]' -c 2 -n 4 " + u},
		{"-A joined after switches", "-kAuser:s3cr3t " + u, "'-kA[redacted]' " + u},
		{"-P", "-P proxy:s3cr3t " + u, "-P '[redacted]' " + u},
		{"-C", "-C 'sid=s3cr3t; theme=dark' " + u, "-C '[redacted]' " + u},
		{"every flag", "ab -n 10 -C sid=s1 -A u:s2 -P p:s3 -H 'Cookie: s4' -H 'Accept: */*' " + u,
			"ab -n 10 -C '[redacted]' -A '[redacted]' -P '[redacted]' -H 'Cookie: [redacted]' -H 'Accept: */*' " + u},
		{"a value that looks like a flag", "-H '-A: x' -T -C " + u, "-H '-A: x' -T -C " + u},
		{"line continuation kept", "-n 10 \\\n  -A u:s3cr3t \\\n  " + u, "-n 10 \\\n  -A '[redacted]' \\\n  " + u},
		{"long options stepped over", "--rate 5 --format=json -A u:s3cr3t " + u, "--rate 5 --format=json -A '[redacted]' " + u},
		{"options end at the URL", u + " -A u:s3cr3t", u + " -A u:s3cr3t"}, // ab refuses it: never stored
		{"unterminated quote", "-A 'u:s3cr3t " + u, RedactedValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redactABLine(tt.line)
			if got != tt.want {
				t.Errorf("redactABLine(%q)\n got %q\nwant %q", tt.line, got, tt.want)
			}
			if tt.name != "options end at the URL" && strings.Contains(got, "s3cr3t") {
				t.Errorf("redactABLine(%q) = %q shows the secret", tt.line, got)
			}
			// A line that runs still runs redacted, with the same shape.
			if plan, err := parseABTarget(tt.line); err == nil {
				red, err := parseABTarget(got)
				if err != nil {
					t.Fatalf("the redacted line %q no longer parses: %v", got, err)
				}
				if !cmp.Equal(plan.URLs, red.URLs) || plan.Concurrency != red.Concurrency || plan.Requests != red.Requests || len(plan.Headers) != len(red.Headers) {
					t.Errorf("the redacted line %q is another run: %+v, want %+v", got, red, plan)
				}
			}
		})
	}
}

// TestRedactedSpec: every secret of a spec is replaced, everything else,
// points included, is as it was, and the spec redacted is left intact.
func TestRedactedSpec(t *testing.T) {
	spec := Spec{
		Name: "secrets",
		Targets: []Target{
			{Name: "url", URL: "http://user:s3cr3t-url@127.0.0.1:8081/",
				Request: &Request{Headers: map[string]string{"X-Api-Key": "s3cr3t-target", "Accept": "text/html"}}},
			{Name: "ab", AB: "-n 10 -c 2 -H 'Authorization: Bearer s3cr3t-ab' -A u:s3cr3t-basic http://127.0.0.1:8082/"},
			{Name: "hl", HTTPLoad: "-parallel 2 -fetches 10", URLs: []string{"http://127.0.0.1:8083/", "http://u:s3cr3t-hl@127.0.0.1:8083/b"}},
		},
		Request: Request{Headers: map[string]string{"Authorization": "Bearer s3cr3t-job", "cookie": "sid=s3cr3t-cookie", "X-Trace": "1"}},
		Sweep:   Sweep{Concurrency: []int{1, 2}, Requests: []int{10}},
		Webhook: &Webhook{URL: "http://hook:s3cr3t-hook@127.0.0.1:9000/hooks"},
	}
	before := cloneSpec(t, spec)
	got := spec.Redacted()
	want := cloneSpec(t, spec)
	want.Targets[0].URL = "http://xxxxx@127.0.0.1:8081/"
	want.Targets[0].Request.Headers["X-Api-Key"] = RedactedValue
	want.Targets[1].AB = "-n 10 -c 2 -H 'Authorization: [redacted]' -A '[redacted]' http://127.0.0.1:8082/"
	want.Targets[2].URLs[1] = "http://xxxxx@127.0.0.1:8083/b"
	want.Request.Headers["Authorization"] = RedactedValue
	want.Request.Headers["cookie"] = RedactedValue
	want.Webhook.URL = "http://xxxxx@127.0.0.1:9000/hooks"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redacted mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, spec); diff != "" {
		t.Errorf("Redacted changed the spec it was called on (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(spec.WithDefaults().Points(), got.WithDefaults().Points()); diff != "" {
		t.Errorf("the redacted spec's points differ (-spec +redacted):\n%s", diff)
	}
	if zero := (Spec{}).Redacted(); !cmp.Equal(zero, Spec{}) {
		t.Errorf("Spec{}.Redacted() = %+v, want the zero spec", zero)
	}
}

// cloneSpec deep-copies s through its JSON form, as stored.
func cloneSpec(t *testing.T, s Spec) Spec {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out Spec
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBadABLineMessageHidesSecrets: a 422 about an ab line quotes what it
// refuses, but never the line's secrets.
func TestBadABLineMessageHidesSecrets(t *testing.T) {
	const u = " http://127.0.0.1:8081/"
	lines := []string{
		"-H 'Authorization Bearer s3cr3t-nocolon'" + u,
		"-H 'X-Api-Key: s3cr3t-value' -H 'bad header: x'" + u,
		`-C "sid=s3cr3t-cookie` + "\n" + `x=1"` + u,
		"-A u:s3cr3t-basic -n 1 -c 5" + u,
		"-P p:s3cr3t-proxy" + u,
		"-H 'Authorization: Bearer s3cr3t-two' -p /etc/passwd" + u,
	}
	for _, line := range lines {
		s := Spec{Targets: []Target{{AB: line}}}
		err := s.WithDefaults().Validate(DefaultLimits(), testservers.LoopbackOnly)
		if err == nil {
			t.Errorf("Validate(ab %q) = nil, want a problem", line)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("Validate(ab %q) = %q shows the secret", line, err)
		}
	}
}

// TestSecretHeaderWordsDocumented: the README and the API's description
// of a job list secretHeaderWords as they are; a word added to the table
// must be added there.
func TestSecretHeaderWordsDocumented(t *testing.T) {
	list := func(quote string) string {
		var ws []string
		for _, w := range secretHeaderWords {
			ws = append(ws, quote+w+quote)
		}
		return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
	}
	for _, doc := range []struct{ path, want string }{
		{"../../README.md", list("`")},
		{"../../api/types.go", list("")},
	} {
		b, err := os.ReadFile(doc.path)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "//", "")), " ")
		if !strings.Contains(text, doc.want) {
			t.Errorf("%s does not list the secret header words as %q", doc.path, doc.want)
		}
	}
}
