package dashboard

import (
	"bytes"
	"io"
	"net/http"
)

// inProcess is an http.RoundTripper that serves each request with the
// API's handler directly: the dashboard is an API client that never
// leaves the process, so nothing of the API is copied here.
type inProcess struct {
	api    http.Handler
	remote string // the browser's address, for the API's logs and limits
}

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Clone(r.Context())
	in.RemoteAddr = t.remote
	in.RequestURI = r.URL.RequestURI()
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := &recorder{header: http.Header{}}
	t.api.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		Status:        http.StatusText(rec.status),
		StatusCode:    rec.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rec.header,
		Body:          io.NopCloser(bytes.NewReader(rec.body.Bytes())),
		ContentLength: int64(rec.body.Len()),
		Request:       r,
	}, nil
}

// recorder keeps an answer of the API in memory.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
