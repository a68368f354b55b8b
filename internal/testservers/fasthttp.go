package testservers

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// StartFasthttp serves h with a fasthttp server on a free 127.0.0.1 port
// until the test ends and returns its URL (http://127.0.0.1:PORT, without a
// trailing slash): a well-behaved in-process target for tests that need
// real requests but no particular web server.
func StartFasthttp(t testing.TB, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testservers: listen: %v", err)
	}
	srv := &fasthttp.Server{Handler: h, Name: "benchq-test"}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.ShutdownWithContext(ctx)
	})
	return "http://" + ln.Addr().String()
}
