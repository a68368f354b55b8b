// Package config turns a benchq command line and its BENCHQ_* environment
// variables into one Config. Flags override the environment, which overrides
// the defaults; every flag is listed by --help with its variable and default.
// The package reads no process state itself: callers pass the arguments and a
// getenv function, so cmd/ stays the only place that touches os and tests can
// load any configuration they like.
package config
