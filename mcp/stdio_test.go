package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

// rpcAnswer is a JSON-RPC answer as a client reads it.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// runStdio feeds lines to `custodian -C dir mcp` and returns its answers
// once stdin ends: the calls' by id, and the error replies with a null id
// in order.
func runStdio(t *testing.T, dir string, lines ...string) (byID map[string]rpcAnswer, nullID []rpcAnswer) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), "-C", dir, "mcp")
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("custodian mcp: %v\n%s", err, stderr.String())
	}
	byID = map[string]rpcAnswer{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a rpcAnswer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("stdout line %q: %v", sc.Bytes(), err)
		}
		if string(a.ID) == "null" {
			nullID = append(nullID, a)
		} else {
			byID[string(a.ID)] = a
		}
	}
	return byID, nullID
}

const (
	initLine        = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`
	initializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func toolCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// TestStdioBadLines: `custodian mcp` answers a line it cannot read with a
// JSON-RPC error (a parse error for one that is not JSON; an invalid
// request for one nested deeper than 1000 levels, one that is not
// JSON-RPC, a batch) and goes on; every call is answered before it exits
// at the end of stdin.
func TestStdioBadLines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	deep := toolCall("deep", "status", `{"slice":`+strings.Repeat("[", 1001)+strings.Repeat("]", 1001)+`}`)
	byID, nullID := runStdio(t, dir, initLine, initializedLine,
		`nope`,
		toolCall("1", "slice_add", `{"slice":"SLICE-001","name":"first"}`),
		`{"jsonrpc":"2.0","id":7,"method":"tools/call",`,
		deep,
		`{"hello":"world"}`,
		`[{"jsonrpc":"2.0","id":"b","method":"ping"}]`,
		toolCall("2", "slice_add", `{"slice":"SLICE-002","name":"second"}`),
	)
	want := []int{-32700, -32700, -32600, -32600, -32600}
	if len(nullID) != len(want) {
		t.Fatalf("%d error replies, want %d: %+v", len(nullID), len(want), nullID)
	}
	for i, a := range nullID {
		if a.Error == nil || a.Error.Code != want[i] {
			t.Errorf("error reply %d: %+v, want code %d", i, a.Error, want[i])
		} else {
			t.Logf("%d %s", a.Error.Code, a.Error.Message)
		}
	}
	for _, id := range []string{`"init"`, `"1"`, `"2"`} {
		a, ok := byID[id]
		if !ok || a.Result == nil || a.Result.IsError {
			t.Errorf("call %s: %+v (answered: %v)", id, a, ok)
		}
	}
	if _, ok := byID[`"deep"`]; ok {
		t.Error("the SDK saw the message nested 1001 levels deep")
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".asdd", "state", "manifest.json")); err != nil || !bytes.Contains(b, []byte(`"SLICE-002"`)) {
		t.Errorf("the call after the bad lines is not committed: %v", err)
	}
}

// TestStdioInvalidUTF8: tool arguments with a raw invalid byte or a lone
// surrogate escape are INVALID_INPUT and change nothing (a decoder would
// have committed U+FFFD).
func TestStdioInvalidUTF8(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	manifest := filepath.Join(dir, ".asdd", "state", "manifest.json")
	before, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	byID, _ := runStdio(t, dir, initLine, initializedLine,
		toolCall("raw", "slice_add", "{\"slice\":\"SLICE-001\",\"name\":\"a\xffb\"}"),
		toolCall("escape", "slice_add", `{"slice":"SLICE-001","name":"a\ud800b"}`),
		toolCall("key", "slice_add", "{\"slice\":\"SLICE-001\",\"n\xffame\":\"x\"}"),
	)
	for _, id := range []string{`"raw"`, `"escape"`, `"key"`} {
		a := byID[id]
		if a.Result == nil || !a.Result.IsError || !strings.HasPrefix(a.Result.Content[0].Text, "INVALID_INPUT:") {
			t.Errorf("call %s: %+v", id, a)
		}
	}
	after, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the manifest changed")
	}
}

// TestStdioAnswersEveryCallBeforeEOF: when stdin ends right after the
// calls, the server answers every one of them before RunStdio returns.
func TestStdioAnswersEveryCallBeforeEOF(t *testing.T) {
	p := newProject(t)
	p.seed()
	lines := []string{initLine, initializedLine, "{oops"}
	for i := range 20 {
		lines = append(lines, toolCall(fmt.Sprint(i), "heartbeat", fmt.Sprintf(`{"agent":"discovery","done":%d}`, i)))
	}
	var out bytes.Buffer
	if err := p.server(false).RunStdio(context.Background(), strings.NewReader(strings.Join(lines, "\n")), &out); err != nil {
		t.Fatal(err)
	}
	answered := 0
	for line := range strings.Lines(out.String()) {
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if a.Result != nil && !a.Result.IsError {
			answered++
		}
	}
	if answered != 21 {
		t.Fatalf("%d calls answered, want 21 (initialize and 20 heartbeats):\n%s", answered, out.String())
	}
}
