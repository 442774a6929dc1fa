package etcd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate into dir.
func pki(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "custodian test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca = write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	srvCert, srvKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return
}

// The store works on a cluster that requires TLS with client certificates
// and password authentication, configured entirely by the store URL; wrong
// credentials and keys outside the user's permission are refused.
func TestTLSAndAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	dir := t.TempDir()
	ca, sc, sk, cc, ck := pki(t, dir)
	srv, err := etcdtest.Start(filepath.Join(dir, "data"), etcdtest.Options{TLS: &etcdtest.TLSFiles{CA: ca, Cert: sc, Key: sk}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	q := "?" + url.Values{"cacert": {ca}, "cert": {cc}, "key": {ck}}.Encode()
	base := "etcd://" + srv.URL()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Without TLS options the server is unreachable.
	plain, _ := etcd.ParseURL(base + "/secure?dial-timeout=1s")
	if _, err := etcd.Open(plain, etcd.Options{}); err == nil {
		t.Fatal("plain-text connection to a TLS-only server succeeded")
	}

	// Set up users as an administrator would.
	admin, _ := etcd.ParseURL(base + "/" + q)
	ac, err := etcd.Dial(admin)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	steps := []func() error{
		func() error { _, err := ac.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := ac.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := ac.RoleAdd(ctx, "custodian"); return err },
		func() error {
			_, err := ac.RoleGrantPermission(ctx, "custodian", "/secure/", clientv3.GetPrefixRangeEnd("/secure/"), clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := ac.UserAdd(ctx, "agent", "s3cr3t"); return err },
		func() error { _, err := ac.UserGrantRole(ctx, "agent", "custodian"); return err },
		func() error { _, err := ac.AuthEnable(ctx); return err },
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("setup step %d: %v", i, err)
		}
	}

	good, err := etcd.ParseURL(base + "/secure" + q)
	if err != nil {
		t.Fatal(err)
	}
	good.FromEnv(func(k string) string { return map[string]string{etcd.EnvUser: "agent", etcd.EnvPassword: "s3cr3t"}[k] })
	s, err := etcd.Open(good, etcd.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}

	bad, _ := etcd.ParseURL(base + "/secure" + q)
	bad.Username, bad.Password = "agent", "wrong"
	if bs, err := etcd.Open(bad, etcd.Options{}); err == nil {
		bs.Close()
		t.Fatal("wrong password accepted")
	} else if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("error shows the password: %v", err)
	}

	other, _ := etcd.ParseURL("etcd://agent:s3cr3t@" + srv.URL() + "/elsewhere" + q)
	if es, err := etcd.Open(other, etcd.Options{}); err == nil {
		defer es.Close()
		if _, err := es.Update(ctx, key, set("a", 1), store.Create()); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("write outside the user's prefix: %v", err)
		}
	} else if !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("open outside the user's prefix: %v", err)
	}
}
