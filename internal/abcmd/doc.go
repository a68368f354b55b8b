// Package abcmd reads benchmark command lines the way their tools do: ab's
// flags (ApacheBench 2.4.x, with benchq's long options --json, --format,
// --rate, --urls, --http-version, --http2, --max-streams and --max-body, and
// the TLS ones) and http_load's. A parsed line becomes a measure.Plan
// plus the output options the command asked for.
//
// Both `benchq ab` and job specs ("ab": "-n 1000 -c 50 -k URL") go through
// this package, so a command line means the same on a laptop and on a
// worker. abcmd never touches the file system: a body file (-p, -u) or a URL
// list (--urls) comes back as a path, and the caller reads it and hands the
// bytes back (AB.SetBody, ParseURLList). Errors carry ab's own message and
// say whether ab would print its usage (UsageError, exit 22) or not
// (InputError, exit 1), so the CLI can answer as ab does.
package abcmd
