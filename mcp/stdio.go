package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxDepth is how deep the SDK reads a message (its JSON decoder's
// limit); a deeper one would end its session.
const maxDepth = 1000

// RunStdio serves one session over newline-delimited JSON-RPC on in and
// out (the go-sdk's IOTransport) until in ends or ctx is done. It adds
// what the SDK's transport does not do, which ends the session instead: a
// line that is not JSON gets a parse error (-32700), one the SDK cannot
// read (nested deeper than 1000 levels, not a JSON-RPC message, a batch,
// longer than the cap) an invalid request (-32600), and the session goes
// on. At the end of in, every call read is answered before it returns.
func (s *Server) RunStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out}
	r := &lineReader{in: bufio.NewReader(in), out: w, max: 4 * s.o.MaxArgBytes}
	w.cond = sync.NewCond(&w.mu)
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.done = true
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: w, MaxLineLength: -1})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// lineReader hands the SDK the lines of in that it can read, and answers
// the others itself.
type lineReader struct {
	in   *bufio.Reader
	out  *lineWriter
	max  int
	line []byte // the rest of the line being read
}

func (r *lineReader) Read(p []byte) (int, error) {
	for len(r.line) == 0 {
		line, err := r.next()
		if err != nil {
			r.out.drain()
			return 0, err
		}
		if e := r.check(line); e != nil {
			r.out.reply(e)
			continue
		}
		r.line = line
	}
	n := copy(p, r.line)
	r.line = r.line[n:]
	return n, nil
}

// next returns the next line that is not blank, with its newline; nil
// for a line over the cap (answered here).
func (r *lineReader) next() ([]byte, error) {
	for {
		var line []byte
		over := false
		for {
			chunk, err := r.in.ReadSlice('\n')
			if !over {
				line = append(line, chunk...)
				over = len(line) > r.max
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && (len(line) == 0 || err != io.EOF) {
				return nil, err
			}
			break
		}
		switch {
		case over:
			r.out.reply(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("a message over %d bytes", r.max)})
		case len(bytes.TrimSpace(line)) > 0:
			if line[len(line)-1] != '\n' {
				line = append(line, '\n')
			}
			return line, nil
		}
	}
}

// check returns the error reply of a line the SDK cannot read, and counts
// the call it carries.
func (r *lineReader) check(line []byte) *jsonrpc.Error {
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	for {
		_, err := dec.ReadToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: " + err.Error()}
		}
		if dec.StackDepth() > maxDepth {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("a message nested deeper than %d levels", maxDepth)}
		}
		if dec.StackDepth() == 0 && dec.InputOffset() < int64(len(bytes.TrimRight(line, " \t\r\n"))) {
			return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: more than one JSON value on a line"}
		}
	}
	if bytes.TrimSpace(line)[0] == '[' {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "batches are not supported (the protocol removed them in 2025-06-18): send one message a line"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		r.out.mu.Lock()
		r.out.pending++
		r.out.mu.Unlock()
	}
	return nil
}

// lineWriter writes whole messages to out, one at a time, and counts the
// calls not yet answered.
type lineWriter struct {
	w       io.Writer
	mu      sync.Mutex
	cond    *sync.Cond
	pending int
	done    bool // the context is done: do not wait for answers
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.w.Write(p)
	if msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
		if _, ok := msg.(*jsonrpc.Response); ok && w.pending > 0 {
			w.pending--
			w.cond.Broadcast()
		}
	}
	return n, err
}

func (w *lineWriter) Close() error { return nil }

// reply writes an error answer to a line the SDK did not see.
func (w *lineWriter) reply(e *jsonrpc.Error) {
	// The id is null: the line's own could not be read, or it is not
	// a request the SDK will answer.
	b, err := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, e})
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w.Write(append(b, '\n'))
}

// drain waits until every call read is answered (or the context is done).
func (w *lineWriter) drain() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.pending > 0 && !w.done {
		w.cond.Wait()
	}
}
