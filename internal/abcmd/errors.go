package abcmd

import "errors"

// ErrHelp is returned for -h (and --help): ab prints its usage and exits 22.
var ErrHelp = errors.New("abcmd: help requested")

// ErrVersion is returned for -V: ab prints its banner and exits 0.
var ErrVersion = errors.New("abcmd: version requested")

// ErrSyntax is wrapped by SplitCommandLine's errors: an unterminated quote
// or a trailing backslash.
var ErrSyntax = errors.New("abcmd: command line syntax")

// ErrTooManyWords is wrapped by SplitCommandLine's error for a line of more
// than MaxWords words.
var ErrTooManyWords = errors.New("abcmd: command line too long")

// UsageError is bad input that ab answers with "ab: Msg", its usage text
// and exit status 22 (EINVAL): an unknown option, a missing value, the
// wrong number of arguments, an invalid URL, -c above -n.
type UsageError struct {
	Msg string // ab's message, verbatim where ab has one
}

func (e *UsageError) Error() string { return "abcmd: " + e.Msg }

// InputError is bad input that ab answers with Msg alone and exit status 1
// (its err()): an invalid number of requests, mixed methods.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return "abcmd: " + e.Msg }

func usageErr(msg string) error { return &UsageError{Msg: msg} }

func inputErr(msg string) error { return &InputError{Msg: msg} }
