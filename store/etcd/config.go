package etcd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/custodian-dev/custodian/reason"
)

// Config is where and how to reach an etcd cluster: what an etcd:// store
// URL says.
type Config struct {
	Endpoints []string // host:port
	Prefix    string   // key prefix, beginning and ending in "/"
	Username  string
	Password  string
	// TLS: CACert verifies the servers (system roots when empty); Cert and
	// Key authenticate the client. TLS is on when Secure or any is set.
	Secure          bool
	CACert          string
	Cert            string
	Key             string
	MaxRequestBytes int           // 0: DefaultMaxRequestBytes
	DialTimeout     time.Duration // 0: 5s
}

// Environment variables that supply credentials not given in the URL.
const (
	EnvUser     = "CUSTODIAN_ETCD_USER"
	EnvPassword = "CUSTODIAN_ETCD_PASSWORD"
)

// ParseURL parses a store URL:
//
//	etcd://[user[:password]@]host:port[,host:port...][/prefix][?option=value&...]
//
// etcds:// turns TLS on with the system's roots. Options: cacert, cert, key
// (PEM file paths; any of them turns TLS on), max-request-bytes (the
// server's --max-request-bytes), dial-timeout (a Go duration). The prefix
// defaults to /custodian/.
func ParseURL(raw string) (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return Config{}, reason.New(reason.InvalidInput, "store URL %s: %s", redact(raw), fmt.Sprintf(format, args...))
	}
	var c Config
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "etcds://"); !ok {
			return bad("want etcd://host:port[,host:port]/prefix")
		}
		c.Secure = true
	}
	rest, query, _ := strings.Cut(rest, "?")
	authority, p, hasPath := strings.Cut(rest, "/")
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		user, pass, hasPass := strings.Cut(authority[:at], ":")
		var err error
		if c.Username, err = url.PathUnescape(user); err != nil || c.Username == "" {
			return bad("bad user name")
		}
		if hasPass {
			if c.Password, err = url.PathUnescape(pass); err != nil {
				return bad("bad password")
			}
		}
		authority = authority[at+1:]
	}
	if authority == "" {
		return bad("no endpoint")
	}
	for _, h := range strings.Split(authority, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return bad("endpoint %q is not host:port", h)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return bad("endpoint %q has a bad port", h)
		}
		if strings.ContainsAny(host, " \t/\\") {
			return bad("endpoint %q has a bad host", h)
		}
		c.Endpoints = append(c.Endpoints, h)
	}
	c.Prefix = DefaultPrefix
	if hasPath && p != "" {
		pp, err := url.PathUnescape(p)
		if err != nil || strings.ContainsRune(pp, 0) {
			return bad("bad prefix")
		}
		c.Prefix = "/" + strings.Trim(pp, "/") + "/"
		if c.Prefix == "//" {
			c.Prefix = DefaultPrefix
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return bad("bad options: %v", err)
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "cacert":
			c.CACert = v
		case "cert":
			c.Cert = v
		case "key":
			c.Key = v
		case "max-request-bytes":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1024 {
				return bad("max-request-bytes %q is not a size of at least 1024 bytes", v)
			}
			c.MaxRequestBytes = n
		case "dial-timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("dial-timeout %q is not a positive duration", v)
			}
			c.DialTimeout = d
		default:
			return bad("unknown option %q (known: cacert, cert, key, max-request-bytes, dial-timeout)", k)
		}
	}
	if (c.Cert == "") != (c.Key == "") {
		return bad("cert and key go together")
	}
	if c.CACert != "" || c.Cert != "" {
		c.Secure = true
	}
	return c, nil
}

// FromEnv fills the user name and password the URL did not give from
// $CUSTODIAN_ETCD_USER and $CUSTODIAN_ETCD_PASSWORD.
func (c *Config) FromEnv(getenv func(string) string) {
	if c.Username == "" {
		c.Username = getenv(EnvUser)
	}
	if c.Password == "" && c.Username != "" {
		c.Password = getenv(EnvPassword)
	}
}

// String is the URL with the password left out.
func (c Config) String() string {
	var b strings.Builder
	if c.Secure && c.CACert == "" && c.Cert == "" {
		b.WriteString("etcds://")
	} else {
		b.WriteString("etcd://")
	}
	if c.Username != "" {
		b.WriteString(strings.ReplaceAll(url.QueryEscape(c.Username), "+", "%20") + "@")
	}
	b.WriteString(strings.Join(c.Endpoints, ","))
	b.WriteString((&url.URL{Path: c.Prefix}).EscapedPath())
	return b.String()
}

// redact drops the password from a raw URL for messages.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	auth, tail, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(auth, "@"); at >= 0 {
		user, _, _ := strings.Cut(auth[:at], ":")
		auth = user + ":***" + auth[at:]
		return scheme + "://" + auth + "/" + tail
	}
	return raw
}

func (c Config) tls() (*tls.Config, error) {
	if !c.Secure {
		return nil, nil
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, fmt.Errorf("etcd CA certificate: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, reason.New(reason.InvalidInput, "etcd CA certificate %s holds no PEM certificate", c.CACert)
		}
		t.RootCAs = pool
	}
	if c.Cert != "" {
		cert, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, fmt.Errorf("etcd client certificate: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	return t, nil
}

// Dial returns a client of the cluster. It does not wait for a connection.
func Dial(c Config) (*clientv3.Client, error) {
	t, err := c.tls()
	if err != nil {
		return nil, err
	}
	timeout := c.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	maxReq := c.MaxRequestBytes
	if maxReq <= 0 {
		maxReq = DefaultMaxRequestBytes
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          c.Endpoints,
		DialTimeout:        timeout,
		TLS:                t,
		Username:           c.Username,
		Password:           c.Password,
		MaxCallSendMsgSize: max(2<<20, maxReq+64<<10),
		Logger:             zap.NewNop(),
	})
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", c, err)
	}
	return cli, nil
}

// Open dials the cluster, checks within the dial timeout that it answers,
// and returns a Store on the URL's prefix that owns the client.
func Open(c Config, opts Options) (*Store, error) {
	cli, err := Dial(c)
	if err != nil {
		return nil, err
	}
	timeout := c.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := cli.Get(ctx, c.Prefix, clientv3.WithCountOnly()); err != nil {
		cli.Close()
		return nil, etcdError(fmt.Sprintf("reach etcd at %s", c), err)
	}
	opts.Prefix = c.Prefix
	if c.MaxRequestBytes > 0 {
		opts.MaxRequestBytes = c.MaxRequestBytes
	}
	s := New(cli, opts)
	s.owns = true
	s.source = c.String()
	return s, nil
}
