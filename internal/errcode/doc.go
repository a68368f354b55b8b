// Package errcode is the one error type every layer of benchq returns
// for what a caller did wrong or what it may retry: a code that says
// which kind of problem it is, and a message written for the person or
// program that reads it.
//
// The API maps a code to an HTTP status and a problem type (RFC 9457);
// the CLI prints the message. Neither reads the Go error chain, which
// names packages and functions and is meant for logs: Error() keeps the
// cause for them, Message is what a client sees.
//
// Packages keep sentinel errors for what their callers test; a sentinel
// made with Sentinel matches (errors.Is) every error of its code, so a
// layer may write its own message for a condition and callers still
// recognise it.
//
// errcode sits at the bottom of the dependency graph: it imports only the
// standard library, so the engine, the store and the API can all use it.
package errcode
