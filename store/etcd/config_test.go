package etcd

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/reason"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in   string
		want Config
	}{
		{"etcd://127.0.0.1:2379", Config{Endpoints: []string{"127.0.0.1:2379"}, Prefix: "/custodian/"}},
		{"etcd://a:2379,b:2379/team/proj", Config{Endpoints: []string{"a:2379", "b:2379"}, Prefix: "/team/proj/"}},
		{"etcd://a:2379/", Config{Endpoints: []string{"a:2379"}, Prefix: "/custodian/"}},
		{"etcd://bob:s%40cret@a:2379/p", Config{Endpoints: []string{"a:2379"}, Prefix: "/p/", Username: "bob", Password: "s@cret"}},
		{"etcd://bob@[::1]:2379/p/", Config{Endpoints: []string{"[::1]:2379"}, Prefix: "/p/", Username: "bob"}},
		{"etcds://a:2379/p", Config{Endpoints: []string{"a:2379"}, Prefix: "/p/", Secure: true}},
		{"etcd://a:2379/p?cacert=/ca.pem&cert=/c.pem&key=/k.pem&max-request-bytes=4194304&dial-timeout=2s",
			Config{Endpoints: []string{"a:2379"}, Prefix: "/p/", Secure: true, CACert: "/ca.pem", Cert: "/c.pem", Key: "/k.pem", MaxRequestBytes: 4 << 20, DialTimeout: 2 * time.Second}},
	}
	for _, tc := range tests {
		got, err := ParseURL(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
	bad := []string{
		"", "http://a:2379", "etcd://", "etcd:///p", "etcd://a/p", "etcd://a:x/p", "etcd://a:2379,/p",
		"etcd://a:99999/p", "etcd://:pw@a:2379/p", "etcd://a:2379/p?cert=/c.pem", "etcd://a:2379/p?bogus=1",
		"etcd://a:2379/p?max-request-bytes=12", "etcd://a:2379/p?dial-timeout=-1s", "etcd://a:2379/%zz",
	}
	for _, in := range bad {
		if _, err := ParseURL(in); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%q: got %v, want INVALID_INPUT", in, err)
		}
	}
}

func TestURLNeverShowsThePassword(t *testing.T) {
	c, err := ParseURL("etcd://bob:hunter2@a:2379/p")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.String(); strings.Contains(s, "hunter2") || s != "etcd://bob@a:2379/p/" {
		t.Fatalf("String() = %q", s)
	}
	_, err = ParseURL("etcd://bob:hunter2@a:2379/p?bogus=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{EnvUser: "svc", EnvPassword: "pw"}
	c, _ := ParseURL("etcd://a:2379/p")
	c.FromEnv(func(k string) string { return env[k] })
	if c.Username != "svc" || c.Password != "pw" {
		t.Fatalf("from env: %+v", c)
	}
	c, _ = ParseURL("etcd://alice:x@a:2379/p")
	c.FromEnv(func(k string) string { return env[k] })
	if c.Username != "alice" || c.Password != "x" {
		t.Fatalf("URL credentials overridden: %+v", c)
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"etcd://a:2379/p", "etcds://u:p@h1:1,h2:2/x/y?cacert=c", "etcd://[::1]:2379", "etcd://a:2379/p?dial-timeout=1s", "etcd://a%3Ab%20c@h:1/a%3Fb%25c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseURL(in)
		if err != nil {
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Fatalf("%q: error without INVALID_INPUT: %v", in, err)
			}
			return
		}
		if len(c.Endpoints) == 0 || !strings.HasPrefix(c.Prefix, "/") || !strings.HasSuffix(c.Prefix, "/") {
			t.Fatalf("%q: parsed to %+v", in, c)
		}
		// What String prints parses back to the same place.
		again, err := ParseURL(c.String())
		if err != nil {
			t.Fatalf("%q: String() %q does not parse: %v", in, c.String(), err)
		}
		if again.Prefix != c.Prefix || strings.Join(again.Endpoints, ",") != strings.Join(c.Endpoints, ",") || again.Username != c.Username {
			t.Fatalf("%q: round trip %+v -> %q -> %+v", in, c, c.String(), again)
		}
	})
}
