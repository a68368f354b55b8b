// Package hostile is the hostile-tenant fault suite: real `benchq serve`,
// workers and redis-server processes (and Chromium where a web page is the
// attacker), each test one way a tenant or a web page could take the
// service down or misuse it, and the bound that must hold against it. It
// has no code of its own, only tests; they are skipped with -short.
package hostile
