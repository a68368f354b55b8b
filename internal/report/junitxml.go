package report

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The JUnit XML document as Jenkins' xunit plugin's junit-10.xsd
// describes it (Surefire's and Ant's shape, which GitLab, GitHub's test
// reporters and TestBeats read too): testsuites > testsuite > properties,
// testcase > failure | error | skipped. Properties are a testsuite's only:
// the schema has none on a testcase.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     xmlText      `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     junitSeconds `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     xmlText      `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     junitSeconds `xml:"time,attr"`
	// Timestamp is when the suite's first run started, in UTC without a
	// zone, as Ant writes it.
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	ID         int             `xml:"id,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  xmlText `xml:"name,attr"`
	Value xmlText `xml:"value,attr"`
}

// junitCase is one testcase: passed when it has none of Failure, Error
// and Skipped, and at most one of them (Ant's schema allows no more).
type junitCase struct {
	Name      xmlText       `xml:"name,attr"`
	Classname xmlText       `xml:"classname,attr"`
	Time      junitSeconds  `xml:"time,attr"`
	Failure   *junitOutcome `xml:"failure"`
	Error     *junitOutcome `xml:"error"`
	Skipped   *junitOutcome `xml:"skipped"`
}

// junitOutcome is a failure, error or skipped element: a one-line message,
// a type a consumer can group by, and the details as text.
type junitOutcome struct {
	Message xmlText `xml:"message,attr,omitempty"`
	Type    string  `xml:"type,attr,omitempty"`
	Details xmlText `xml:",chardata"`
}

// MarshalXML writes the details with their line breaks as they are:
// encoding/xml's chardata field would write each as "&#xA;", which is
// valid but leaves a raw file unreadable.
func (o junitOutcome) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	attr := func(name, v string) {
		if v != "" {
			start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: name}, Value: cleanXMLText(v)})
		}
	}
	attr("message", string(o.Message))
	attr("type", o.Type)
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if o.Details != "" {
		if err := e.EncodeToken(xml.CharData(cleanXMLText(string(o.Details)))); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// count adds up a suite's outcomes from its cases, so the attributes
// cannot disagree with the elements.
func (s *junitSuite) count() {
	s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
}

// junitSeconds is a time attribute: seconds with at most three decimals
// and no exponent, the only form junit-10.xsd's SUREFIRE_TIME admits.
type junitSeconds float64

func (s junitSeconds) MarshalXMLAttr(name xml.Name) (xml.Attr, error) {
	v := max(float64(s), 0)
	return xml.Attr{Name: name, Value: strconv.FormatFloat(v, 'f', 3, 64)}, nil
}

// xmlText is text that goes into the document: names and messages come
// from specs and targets (a target's error message, a server's header),
// and may hold what XML 1.0 cannot carry at all, escaped or not — NUL and
// the other C0 controls, U+FFFE, U+FFFF, bytes that are not UTF-8. Those
// are written as Go escapes ("\x00"), so the message still says what was
// there and every parser reads the file. encoding/xml escapes the rest
// (<, &, quotes, "]]>").
type xmlText string

func (t xmlText) MarshalText() ([]byte, error) { return []byte(cleanXMLText(string(t))), nil }

// cleanXMLText replaces what is not an XML 1.0 Char.
func cleanXMLText(s string) string {
	clean := true
	for _, r := range s {
		if !xmlChar(r) {
			clean = false
			break
		}
	}
	if clean && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !xmlChar(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case !xmlChar(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}

// xmlChar reports whether r is a Char of XML 1.0 (its production [2]).
func xmlChar(r rune) bool {
	switch {
	case r == '\t', r == '\n', r == '\r':
		return true
	case r < 0x20:
		return false
	case r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	}
	return r >= 0x10000 && r <= utf8.MaxRune
}
