package junittest

import (
	"os/exec"
	"strings"
	"testing"
)

// minimal is a document of two cases, one failing, in junit-10.xsd's
// shape. It has two properties: test-results-parser reads a suite's
// properties only when there is more than one (a lone one parses as an
// object, not a list), which benchq's reports always have.
const minimal = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="job" tests="2" failures="1" errors="0" time="1.500">
  <testsuite name="api" tests="2" failures="1" errors="0" time="1.500">
    <properties><property name="job_id" value="job_1"/><property name="c=1 n=10 rps" value="100"/></properties>
    <testcase name="p99_ms &lt; 50 · c=1 n=10" classname="api" time="1.500">
      <failure message="p99_ms was 73 ms, want &lt; 50 ms" type="threshold">details</failure>
    </testcase>
    <testcase name="requests succeeded · c=1 n=10" classname="api" time="1.500"/>
  </testsuite>
</testsuites>
`

// TestValidateTellsValidFromInvalid: the schema check passes a document
// of the schema's shape and refuses ones that break it, so a passing
// Validate means something.
func TestValidateTellsValidFromInvalid(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		missing(t, "xmllint", "apt-get install libxml2-utils")
	}
	Validate(t, []byte(minimal))
	bad := map[string]string{
		"testcase without a name": strings.Replace(minimal, `name="requests succeeded · c=1 n=10" `, "", 1),
		"time with an exponent":   strings.Replace(minimal, `time="1.500">`+"\n    <properties>", `time="1e3">`+"\n    <properties>", 1),
		"suite without counts":    strings.Replace(minimal, `<testsuite name="api" tests="2" failures="1" errors="0"`, `<testsuite name="api"`, 1),
		"unknown element":         strings.Replace(minimal, "<properties>", "<verdict/><properties>", 1),
		"not well-formed":         strings.Replace(minimal, "&lt; 50 ms", "< 50 ms", 1),
	}
	for what, doc := range bad {
		if doc == minimal {
			t.Fatalf("%s: the replacement changed nothing", what)
		}
		if err := validate(t.Context(), xmllint, writeTemp(t, []byte(doc))); err == nil {
			t.Errorf("%s: xmllint passed it, want it refused", what)
		} else {
			lines := strings.Split(err.Error(), "\n")
			t.Logf("%s: refused (%s)", what, lines[min(1, len(lines)-1)])
		}
	}
}

// TestParseCountsCases: the npm parser reads the minimal document's
// suite, its two cases and the failure's message.
func TestParseCountsCases(t *testing.T) {
	r := Parse(t, []byte(minimal))
	if r.Total != 2 || r.Failed != 1 || r.Passed != 1 || len(r.Suites) != 1 {
		t.Fatalf("Parse = %+v, want 2 tests, 1 failed, 1 passed, in 1 suite", r)
	}
	s := r.Suites[0]
	if s.Name != "api" || len(s.Cases) != 2 || s.Cases[0].Status != "FAIL" || s.Cases[0].Failure != "p99_ms was 73 ms, want < 50 ms" ||
		s.Cases[1].Status != "PASS" || s.Metadata["c=1 n=10 rps"] != "100" {
		t.Errorf("suite = %+v, want api with a failing and a passing case and the rps property", s)
	}
}
