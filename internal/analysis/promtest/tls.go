package promtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// PKI is a throwaway certificate authority with a server certificate for 127.0.0.1 and a client
// certificate, all PEM, for a Prometheus that requires mTLS. The files are in Dir.
type PKI struct {
	Dir                                   string
	CAFile, ServerCertFile, ServerKeyFile string
	CA, ClientCert, ClientKey             []byte
}

// NewPKI makes a CA and its two certificates, valid for an hour.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey, caCert, caDER := newCert(t, "perfexp test CA", nil, nil, func(c *x509.Certificate) {
		c.IsCA, c.BasicConstraintsValid = true, true
		c.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	})
	srvKey, _, srvDER := newCert(t, "127.0.0.1", caCert, caKey, func(c *x509.Certificate) {
		c.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	})
	cliKey, _, cliDER := newCert(t, "perfexp", caCert, caKey, func(c *x509.Certificate) {
		c.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	})
	p := &PKI{Dir: dir, CAFile: filepath.Join(dir, "ca.crt"), ServerCertFile: filepath.Join(dir, "server.crt"), ServerKeyFile: filepath.Join(dir, "server.key"),
		CA: pemBlock("CERTIFICATE", caDER), ClientCert: pemBlock("CERTIFICATE", cliDER), ClientKey: keyPEM(t, cliKey)}
	for f, b := range map[string][]byte{p.CAFile: p.CA, p.ServerCertFile: pemBlock("CERTIFICATE", srvDER), p.ServerKeyFile: keyPEM(t, srvKey)} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// WebConfig is a Prometheus web config that serves HTTPS with the server certificate and
// requires a client certificate signed by the CA.
func (p *PKI) WebConfig() string {
	return "tls_server_config:\n  cert_file: " + p.ServerCertFile + "\n  key_file: " + p.ServerKeyFile +
		"\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + p.CAFile + "\n"
}

// Client is an HTTP client that trusts the CA and presents the client certificate.
func (p *PKI) Client(t testing.TB) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CA)
	pair, err := tls.X509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}}
}

func newCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, edit func(*x509.Certificate)) (*ecdsa.PrivateKey, *x509.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour)}
	edit(tmpl)
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert, der
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pemBlock("EC PRIVATE KEY", der)
}

// BasicAuthWebConfig is a Prometheus web config that requires HTTP basic authentication as
// user with password (stored as the bcrypt hash the web config wants).
func BasicAuthWebConfig(t testing.TB, user, password string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return "basic_auth_users:\n  " + user + ": " + string(hash) + "\n"
}

// BasicAuthClient is an HTTP client that sends user and password.
func BasicAuthClient(user, password string) *http.Client {
	return &http.Client{Transport: basicAuth{user, password}}
}

type basicAuth struct{ user, password string }

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.password)
	return http.DefaultTransport.RoundTrip(r)
}
