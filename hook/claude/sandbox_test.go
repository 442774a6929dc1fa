package claude

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var testSandbox = Sandbox{
	DenyWrite: []string{"./.asdd/state", "./.asdd/config.yaml"},
	Files:     []string{"./.asdd/config.yaml"},
	DenyRead:  []string{"~/.config/custodian"},
	Sockets:   []string{"./.asdd/state/custodian.sock"},
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return m
}

func TestMergeSandboxKeepsTheUsersEntries(t *testing.T) {
	user := `{"model":"x","permissions":{"allow":["Bash(ls)"],"deny":["Read(./.env)"]},
	"sandbox":{"enabled":true,"excludedCommands":["docker"],"filesystem":{"denyWrite":["./secrets"],"allowWrite":["~/.kube"]},"network":{"allowedDomains":["github.com"]}}}`
	out, err := MergeSandbox([]byte(user), testSandbox)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	sb := m["sandbox"].(map[string]any)
	fs := sb["filesystem"].(map[string]any)
	if got := fs["denyWrite"]; !reflect.DeepEqual(got, []any{"./secrets", "./.asdd/state", "./.asdd/config.yaml"}) {
		t.Errorf("denyWrite = %v", got)
	}
	if got := fs["allowWrite"]; !reflect.DeepEqual(got, []any{"~/.kube"}) {
		t.Errorf("allowWrite = %v", got)
	}
	if got := fs["denyRead"]; !reflect.DeepEqual(got, []any{"~/.config/custodian"}) {
		t.Errorf("denyRead = %v", got)
	}
	if sb["enabled"] != true || sb["failIfUnavailable"] != true || sb["allowUnsandboxedCommands"] != false {
		t.Errorf("switches: %v", sb)
	}
	if !reflect.DeepEqual(sb["excludedCommands"], []any{"docker"}) || m["model"] != "x" {
		t.Errorf("the user's keys: %v", m)
	}
	net := sb["network"].(map[string]any)
	if net["allowAllUnixSockets"] != true || !reflect.DeepEqual(net["allowedDomains"], []any{"github.com"}) {
		t.Errorf("network = %v", net)
	}
	deny := m["permissions"].(map[string]any)["deny"].([]any)
	if deny[0] != "Read(./.env)" || !contains(deny, "Edit(./.asdd/state/**)") || !contains(deny, "NotebookEdit(./.asdd/config.yaml)") {
		t.Errorf("permissions.deny = %v", deny)
	}
	// Idempotent.
	again, err := MergeSandbox(out, testSandbox)
	if err != nil || string(again) != string(out) {
		t.Errorf("a second merge changed the file (%v):\n%s\n---\n%s", err, out, again)
	}
	// Removed with the original as a guide: the user's settings as they
	// were (enabled was theirs, failIfUnavailable was not).
	back, err := RemoveSandbox(out, []byte(user), testSandbox)
	if err != nil {
		t.Fatal(err)
	}
	if want := decode(t, []byte(user)); !reflect.DeepEqual(decode(t, back), want) {
		t.Errorf("removed:\n%s\nwant the user's settings:\n%s", back, user)
	}
}

func TestMergeSandboxRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", `{"model": "x",`, "settings"},
		{"not an object", `[1]`, "not a JSON object"},
		{"the sandbox turned off", `{"sandbox":{"enabled":false}}`, "settings.sandbox.enabled is false"},
		{"unsandboxed commands allowed", `{"sandbox":{"allowUnsandboxedCommands":true}}`, "allowUnsandboxedCommands"},
		{"sandbox not an object", `{"sandbox":true}`, "settings.sandbox"},
		{"denyWrite not a list", `{"sandbox":{"filesystem":{"denyWrite":"./x"}}}`, "denyWrite"},
		{"a deny rule not a string", `{"permissions":{"deny":[1]}}`, "permissions.deny"},
	} {
		_, err := MergeSandbox([]byte(tc.in), testSandbox)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

func TestNoSandboxWritesOnlyTheDenyRules(t *testing.T) {
	sb := testSandbox
	sb.Off = true
	out, err := MergeSandbox(nil, sb)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out)
	if _, ok := m["sandbox"]; ok {
		t.Errorf("--no-sandbox wrote a sandbox block:\n%s", out)
	}
	if _, ok := m["permissions"]; !ok {
		t.Errorf("--no-sandbox wrote no deny rules:\n%s", out)
	}
}

func contains(l []any, s string) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}
