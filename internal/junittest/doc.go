// Package junittest checks JUnit XML documents the way their consumers
// read them, for tests: Validate runs xmllint against a published JUnit
// schema (Jenkins' xunit plugin's junit-10.xsd, testdata/), and Parse
// reads the document with a JUnit parser from npm under node, returning
// the counts and cases it saw. Either skips when its tool is not
// installed, and fails the test under CI=true, where .ci/run installs
// xmllint, node and the parser (npm ci in testdata/parser).
package junittest
