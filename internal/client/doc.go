// Package client speaks benchq's HTTP API from the outside, as the CLI and
// CI pipelines do: submit a job, read it, cancel it, fetch its report, and
// follow its progress over the Server-Sent Events stream, resuming with
// Last-Event-ID when the stream drops and falling back to polling when no
// stream can be had. It knows the API's wire format only; it imports no
// server code, so it keeps working against an older or newer server that
// speaks the same JSON.
package client
