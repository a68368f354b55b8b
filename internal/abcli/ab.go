package abcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/benchq/benchq/internal/abcmd"
	"github.com/benchq/benchq/internal/clicmd"
)

// Exit statuses of `benchq ab`, as ab's.
const (
	abExitOK      = 0
	abExitErr     = 1   // ab's err(): bad input, a file it cannot open, Ctrl-C
	abExitUsage   = 22  // EINVAL: usage errors, -h
	abExitRefused = 111 // ECONNREFUSED: the first connection was refused
)

// abVersion is what ab -V prints.
const abVersion = "This is ApacheBench, Version 2.3 <$Revision$>\n" +
	"Copyright 1996 Adam Twiss, Zeus Technology Ltd, http://www.zeustech.net/\n" +
	"Licensed to The Apache Software Foundation, http://www.apache.org/\n\n"

// Run is `benchq ab [ab flags] URL`: ApacheBench on the benchq engine. It
// prints what ab prints, where ab prints it, and exits as ab does.
func Run(ctx context.Context, args []string, env clicmd.Env) int {
	stdout, stderr := env.Stdout, env.Stderr
	if n := splitRemoteAB(args); n > 0 {
		return runABRemote(ctx, args[:n], args[n:], stdout, stderr, env.Getenv) // ab_remote.go
	}
	a, err := abcmd.ParseAB(args)
	if err != nil {
		return abParseFailed(err, stdout, stderr)
	}
	if err := readABFiles(a); err != nil {
		fmt.Fprintln(stderr, err)
		return abExitErr
	}
	a.TrustAsAB()
	if err := a.Plan.Validate(); err != nil {
		fmt.Fprintf(stderr, "benchq ab: %v\n", err)
		return abExitErr
	}
	return abBench(ctx, a, stdout, stderr)
}

// abParseFailed answers a command line ParseAB refused, as ab would.
func abParseFailed(err error, stdout, stderr io.Writer) int {
	var ue *abcmd.UsageError
	var ie *abcmd.InputError
	switch {
	case errors.Is(err, abcmd.ErrVersion):
		fmt.Fprint(stdout, abVersion)
		return abExitOK
	case errors.Is(err, abcmd.ErrHelp):
		_ = abcmd.WriteUsage(stderr, "benchq ab")
		return abExitUsage
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "ab: %s\n", ue.Msg)
		_ = abcmd.WriteUsage(stderr, "benchq ab")
		return abExitUsage
	case errors.As(err, &ie):
		fmt.Fprintln(stderr, ie.Msg)
		return abExitErr
	}
	fmt.Fprintf(stderr, "benchq ab: %v\n", err)
	return abExitErr
}

// readABFiles reads what the command line names: the body file (-p, -u),
// the URL list (--urls), the client certificate (-E) and the CA bundle
// (--cacert). Only cmd/ touches the file system. A PEM file's content is
// never printed: -E's holds a private key.
func readABFiles(a *abcmd.AB) error {
	if a.CertFile != "" {
		b, err := os.ReadFile(a.CertFile)
		if err != nil {
			return fmt.Errorf("ab: Could not open client certificate file (%s): %s", a.CertFile, strerror(err))
		}
		a.SetClientCert(b)
	}
	if a.CAFile != "" {
		b, err := os.ReadFile(a.CAFile)
		if err != nil {
			return fmt.Errorf("benchq ab: --cacert: %w", err)
		}
		a.SetCA(b)
	}
	if a.BodyFile != "" {
		b, err := os.ReadFile(a.BodyFile)
		if err != nil {
			return fmt.Errorf("ab: Could not open POST data file (%s): %s", a.BodyFile, strerror(err))
		}
		a.SetBody(b)
	}
	if a.URLsFile != "" {
		b, err := os.ReadFile(a.URLsFile)
		if err != nil {
			return fmt.Errorf("benchq ab: --urls: %w", err)
		}
		urls, err := abcmd.ParseURLList(string(b))
		if err != nil {
			return fmt.Errorf("benchq ab: --urls %s: %w", a.URLsFile, err)
		}
		a.AddURLs(urls)
	}
	return nil
}

// strerror renders err's errno as the C library does ("No such file or
// directory"), which is how ab words it.
func strerror(err error) string {
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}
