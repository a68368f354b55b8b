package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/valyala/fasthttp"
)

// Sentinels of the two size caps; classify counts each in its own class.
var (
	// ErrBodyTooLarge: a response body (as decoded from its framing) was
	// longer than Plan.MaxBody, or its Content-Length said it would be.
	ErrBodyTooLarge = errors.New("loadgen: response body above the size cap")
	// ErrHeaderTooLarge: a response header (or a chunked body's trailer)
	// did not fit the read buffer, HeaderCap bytes.
	ErrHeaderTooLarge = errors.New("loadgen: response header above the size cap")
)

// HeaderCap bounds a response header, status line included, as ab's 8 KB
// buffer does: the header is parsed in place in the worker's read buffer.
const HeaderCap = readBufferSize

// errBrokenChunk is a chunked body whose framing is not HTTP's.
var errBrokenChunk = errors.New("loadgen: malformed chunked body")

// maxInterim bounds the 1xx responses skipped before the final one, as
// fasthttp's own reader does.
const maxInterim = 100

// readResponse reads one response from br: its header with fasthttp into
// h, its body by its framing (Content-Length, chunked, or until the
// server closes) into nothing. Only the decoded body's length is kept, so
// memory stays one read buffer per worker whatever the target sends; body
// bytes past maxBody fail the request with ErrBodyTooLarge. head marks the
// answer to a HEAD request, which has no body. closing reports that the
// connection cannot carry another request.
// sk, when not nil, discards body bytes beyond those buffered straight from
// the socket.
func readResponse(br *bufio.Reader, sk skipper, h *fasthttp.ResponseHeader, head bool, maxBody int64) (body int64, closing bool, err error) {
	if err = readHeader(br, h); err != nil {
		return 0, true, err
	}
	for n := 0; isInterim(h.StatusCode()); n++ {
		if n == maxInterim {
			return 0, true, fmt.Errorf("loadgen: more than %d interim (1xx) responses", maxInterim)
		}
		if err = readHeader(br, h); err != nil {
			return 0, true, err
		}
	}
	closing = h.ConnectionClose()
	if head || noBody(h.StatusCode()) {
		return 0, closing || h.StatusCode() == fasthttp.StatusSwitchingProtocols, nil
	}
	switch cl := int64(h.ContentLength()); {
	case cl >= 0:
		if cl > maxBody {
			return 0, true, ErrBodyTooLarge
		}
		if err = discard(br, sk, cl); errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF // the body was cut short
		}
		return cl, closing, err
	case cl == -1:
		body, err = discardChunked(br, sk, maxBody)
		if err == nil {
			err = readTrailer(br, h)
		}
		return body, closing, err
	default: // no length: the body ends where the server closes
		body, err = discardUntilEOF(br, maxBody)
		return body, true, err
	}
}

// isInterim reports a 1xx response that precedes the final one; 101 ends
// the exchange instead.
func isInterim(status int) bool {
	return status >= 100 && status < 200 && status != fasthttp.StatusSwitchingProtocols
}

// noBody reports a status whose response never has a body (RFC 9110).
func noBody(status int) bool {
	return status < 200 || status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified
}

func readHeader(br *bufio.Reader, h *fasthttp.ResponseHeader) error {
	err := h.Read(br)
	if err != nil && isSmallBuffer(err) {
		return ErrHeaderTooLarge
	}
	return err
}

// isSmallBuffer reports fasthttp's error for a header that does not fit
// the read buffer (its type has no Unwrap: errors.Is cannot see inside).
func isSmallBuffer(err error) bool {
	var small *fasthttp.ErrSmallBuffer
	return errors.As(err, &small)
}

func readTrailer(br *bufio.Reader, h *fasthttp.ResponseHeader) error {
	switch err := h.ReadTrailer(br); {
	case err == nil:
		return nil
	case isSmallBuffer(err):
		return ErrHeaderTooLarge
	case errors.Is(err, io.EOF):
		return io.ErrUnexpectedEOF
	default:
		return err
	}
}

// skipper discards bytes of a connection's stream without handing them
// over: (*timedConn).skip on the engine's own sockets.
type skipper interface {
	// skip discards up to n bytes and returns how many; io.EOF at the
	// peer's close, as Read.
	skip(n int) (int, error)
}

// maxSkip bounds one skip: what loopback hands over in one segment.
const maxSkip = 64 << 10

// discard skips n bytes of br: the bytes it holds, then, with a skipper,
// the rest straight from the socket, else through br's buffer. A 25 KB body
// through the 8 KB buffer costs three copying reads; skipped, one that
// copies nothing, so a worker's buffer stays the only memory a body
// touches, and at c = 500 the kernel no longer writes each body into one of
// 500 cold buffers.
func discard(br *bufio.Reader, sk skipper, n int64) error {
	if sk != nil {
		d, _ := br.Discard(int(min(n, int64(br.Buffered())))) // never fails: the bytes are there
		n -= int64(d)
		for n > 0 {
			k, err := sk.skip(int(min(n, maxSkip)))
			n -= int64(k)
			if err != nil {
				return err
			}
		}
		return nil
	}
	for n > 0 {
		k := int(min(n, math.MaxInt32))
		d, err := br.Discard(k)
		n -= int64(d)
		if err != nil {
			return err
		}
	}
	return nil
}

// discardUntilEOF skips br up to the server's close and returns how many
// bytes it skipped; more than maxBody fails with ErrBodyTooLarge without
// reading further.
func discardUntilEOF(br *bufio.Reader, maxBody int64) (int64, error) {
	var n int64
	for {
		k := int(min(maxBody-n+1, math.MaxInt32))
		d, err := br.Discard(k)
		n += int64(d)
		switch {
		case errors.Is(err, io.EOF):
			return n, nil
		case err != nil:
			return n, err
		case n > maxBody:
			return n, ErrBodyTooLarge
		}
	}
}

// discardChunked skips a chunked body up to its last chunk, before the
// trailer, and returns the length of the data it carried. A chunk that
// would take the data past maxBody fails with ErrBodyTooLarge before it
// is read.
func discardChunked(br *bufio.Reader, sk skipper, maxBody int64) (int64, error) {
	var n int64
	for {
		size, err := chunkSize(br)
		if err != nil {
			return n, err
		}
		if size == 0 {
			return n, nil
		}
		if size > maxBody-n {
			return n, ErrBodyTooLarge
		}
		if err := discard(br, sk, size); err != nil {
			return n, chunkEOF(err)
		}
		n += size
		if err := crlf(br); err != nil {
			return n, err
		}
	}
}

// chunkSize reads a chunk-size line: hex digits, then optional
// whitespace and extensions, then CRLF. The line must fit the read buffer.
func chunkSize(br *bufio.Reader) (int64, error) {
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return 0, fmt.Errorf("%w: chunk-size line longer than %d bytes", errBrokenChunk, br.Size())
	case err != nil:
		return 0, chunkEOF(err)
	case len(line) < 2 || line[len(line)-2] != '\r':
		return 0, fmt.Errorf("%w: chunk-size line not ended by CRLF", errBrokenChunk)
	}
	line = line[:len(line)-2]
	var size int64
	i := 0
	for ; i < len(line); i++ {
		d := unhex(line[i])
		if d < 0 {
			break
		}
		if i == 15 { // 16 hex digits could overflow int64
			return 0, fmt.Errorf("%w: chunk size too long", errBrokenChunk)
		}
		size = size<<4 | int64(d)
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: no chunk size", errBrokenChunk)
	}
	for ; i < len(line) && (line[i] == ' ' || line[i] == '\t'); i++ {
	}
	if i < len(line) && line[i] != ';' {
		return 0, fmt.Errorf("%w: invalid character %q after chunk size", errBrokenChunk, line[i])
	}
	return size, nil
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// crlf reads the CRLF that ends a chunk's data.
func crlf(br *bufio.Reader) error {
	b, err := br.Peek(2)
	if err != nil {
		return chunkEOF(err)
	}
	if b[0] != '\r' || b[1] != '\n' {
		return fmt.Errorf("%w: chunk data not followed by CRLF", errBrokenChunk)
	}
	_, _ = br.Discard(2)
	return nil
}

// chunkEOF reports a close inside a chunked body as the body cut short.
func chunkEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
