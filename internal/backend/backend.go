// Package backend is how perfexp reaches a metrics backend that is more than one open
// Prometheus: the HTTP client configuration of the Prometheus ecosystem
// (prometheus/common/config) built from an experiment's Secret references or from the
// operator's own file, the tenant header of a multi-tenant backend (Mimir, Cortex, Thanos
// Receive) per experiment namespace, and the k6 runners' side of the same settings.
//
// Secret values live only in the HTTP client this package builds and in the runners'
// environment by reference (secretKeyRef): messages name a Secret and key, never a value.
package backend

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/prometheus/common/config"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// DefaultTenantHeader is the header Mimir, Cortex, Loki and Thanos Receive read the tenant from.
const DefaultTenantHeader = "X-Scope-OrgID"

// Tenants maps experiment namespaces to the tenant of a multi-tenant backend.
type Tenants struct {
	// Header is the tenant header's name; DefaultTenantHeader when empty.
	Header string
	// ByNamespace is the tenant of each namespace; a namespace not listed sends no header.
	ByNamespace map[string]string
}

// For returns the header and tenant of namespace ns; tenant is empty when none is mapped.
func (t Tenants) For(ns string) (header, tenant string) {
	header = t.Header
	if header == "" {
		header = DefaultTenantHeader
	}
	return header, t.ByNamespace[ns]
}

// LoadTenantsFile reads a namespace-to-tenant map written as YAML (namespace: tenant), the
// data key of a ConfigMap the administrator mounts.
func LoadTenantsFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		return nil, fmt.Errorf("%s: a map of namespace: tenant: %w", path, err)
	}
	for ns, tenant := range m {
		if strings.TrimSpace(tenant) == "" {
			return nil, fmt.Errorf("%s: namespace %s maps to an empty tenant", path, ns)
		}
	}
	return m, nil
}

// LoadHTTPConfigFile reads the operator's own HTTP client configuration for its default
// backend, in prometheus/common's http_config format (the one of a Prometheus scrape or
// remote_write section: authorization, basic_auth, oauth2, tls_config, http_headers, with the
// *_file forms for mounted Secrets). Relative file paths are relative to the file.
func LoadHTTPConfigFile(path string) (config.HTTPClientConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return config.HTTPClientConfig{}, fmt.Errorf("reading the Prometheus HTTP client configuration: %w", err)
	}
	cfg, err := config.LoadHTTPConfig(string(b))
	if err != nil {
		return config.HTTPClientConfig{}, fmt.Errorf("the Prometheus HTTP client configuration %s: %w", path, err)
	}
	// config.LoadHTTPConfigFile resolves against the parent of the file's directory; a Secret
	// mounted beside the file is what an administrator means.
	cfg.SetDirectory(filepath.Dir(path))
	return *cfg, nil
}

// RefError says that a Secret reference of spec.analysis.prometheusAuth cannot be used. Its
// message names the Secret and key, never a value.
type RefError struct{ Message string }

func (e *RefError) Error() string { return e.Message }

func refErr(format string, args ...any) *RefError {
	return &RefError{Message: fmt.Sprintf(format, args...)}
}

// secretValues reads the keys of Secrets of one namespace, each Secret once.
type secretValues struct {
	ctx       context.Context
	reader    client.Reader
	namespace string
	secrets   map[string]*corev1.Secret
}

func (s *secretValues) get(field string, ref perfexpv1alpha1.SecretKey) (string, error) {
	sec, ok := s.secrets[ref.Name]
	if !ok {
		sec = &corev1.Secret{}
		err := s.reader.Get(s.ctx, client.ObjectKey{Namespace: s.namespace, Name: ref.Name}, sec)
		switch {
		case apierrors.IsNotFound(err):
			return "", refErr("%s names Secret %s, which does not exist in namespace %s", field, ref.Name, s.namespace)
		case apierrors.IsForbidden(err):
			return "", refErr("%s names Secret %s in namespace %s, which the operator may not read (its role grants get on Secrets)", field, ref.Name, s.namespace)
		case err != nil:
			return "", fmt.Errorf("reading Secret %s/%s for %s: %w", s.namespace, ref.Name, field, err)
		}
		s.secrets[ref.Name] = sec
	}
	v, ok := sec.Data[ref.Key]
	if !ok {
		return "", refErr("%s names key %q of Secret %s, which has no such key", field, ref.Key, ref.Name)
	}
	if len(v) == 0 {
		return "", refErr("%s names key %q of Secret %s, which is empty", field, ref.Key, ref.Name)
	}
	return string(v), nil
}

// FromSecrets builds the HTTP client configuration of auth, reading every value from the
// Secrets of namespace (the experiment's own: a tenant can name no other). A reference that
// cannot be used is a *RefError; other errors are the API server's and worth a retry. A nil
// auth gives the default configuration.
func FromSecrets(ctx context.Context, reader client.Reader, namespace string, auth *perfexpv1alpha1.PrometheusAuth) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	if auth == nil {
		return cfg, nil
	}
	s := &secretValues{ctx: ctx, reader: reader, namespace: namespace, secrets: map[string]*corev1.Secret{}}
	const base = "spec.analysis.prometheusAuth"
	if auth.BearerToken != nil {
		tok, err := s.get(base+".bearerToken", *auth.BearerToken)
		if err != nil {
			return cfg, err
		}
		cfg.Authorization = &config.Authorization{Type: "Bearer", Credentials: config.Secret(strings.TrimSpace(tok))}
	}
	if b := auth.BasicAuth; b != nil {
		user, err := s.get(base+".basicAuth.username", b.Username)
		if err != nil {
			return cfg, err
		}
		pass, err := s.get(base+".basicAuth.password", b.Password)
		if err != nil {
			return cfg, err
		}
		cfg.BasicAuth = &config.BasicAuth{Username: strings.TrimSpace(user), Password: config.Secret(strings.TrimRight(pass, "\r\n"))}
	}
	if o := auth.OAuth2; o != nil {
		id, err := s.get(base+".oauth2.clientID", o.ClientID)
		if err != nil {
			return cfg, err
		}
		sec, err := s.get(base+".oauth2.clientSecret", o.ClientSecret)
		if err != nil {
			return cfg, err
		}
		cfg.OAuth2 = &config.OAuth2{ClientID: strings.TrimSpace(id), ClientSecret: config.Secret(strings.TrimSpace(sec)),
			TokenURL: o.TokenURL, Scopes: o.Scopes}
	}
	if t := auth.TLS; t != nil {
		if err := s.tls(base+".tls", t, &cfg.TLSConfig); err != nil {
			return cfg, err
		}
	}
	for i, h := range auth.Headers {
		v, err := s.get(fmt.Sprintf("%s.headers[%d] (%s)", base, i, h.Name), h.ValueFrom)
		if err != nil {
			return cfg, err
		}
		if cfg.HTTPHeaders == nil {
			cfg.HTTPHeaders = &config.Headers{Headers: map[string]config.Header{}}
		}
		cfg.HTTPHeaders.Headers[h.Name] = config.Header{Secrets: []config.Secret{config.Secret(strings.TrimSpace(v))}}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, refErr("%s: %v", base, err)
	}
	return cfg, nil
}

func (s *secretValues) tls(field string, t *perfexpv1alpha1.TLSAuth, out *config.TLSConfig) error {
	out.ServerName = t.ServerName
	if t.CA != nil {
		ca, err := s.get(field+".ca", *t.CA)
		if err != nil {
			return err
		}
		out.CA = ca
		// The CA is parsed here, so a wrong key (a token instead of a PEM bundle) is refused
		// before the run rather than as a TLS failure after it.
		if _, err := config.NewTLSConfig(&config.TLSConfig{CA: ca}); err != nil {
			return refErr("%s (Secret %s, key %q) holds no PEM certificate", field+".ca", t.CA.Name, t.CA.Key)
		}
	}
	if t.Cert != nil && t.Key != nil {
		cert, err := s.get(field+".cert", *t.Cert)
		if err != nil {
			return err
		}
		key, err := s.get(field+".key", *t.Key)
		if err != nil {
			return err
		}
		if _, err := tls.X509KeyPair([]byte(cert), []byte(key)); err != nil {
			// The parser's message quotes no key material.
			return refErr("%s and %s (Secrets %s and %s) are not a PEM certificate and its key: %v", field+".cert", field+".key", t.Cert.Name, t.Key.Name, err)
		}
		out.Cert, out.Key = cert, config.Secret(key)
	}
	return nil
}

// WithTenant returns cfg with the tenant header set to tenant, replacing a header of the same
// name: the administrator's mapping wins over the experiment's own headers. An empty tenant
// leaves cfg as it is.
func WithTenant(cfg config.HTTPClientConfig, header, tenant string) config.HTTPClientConfig {
	if tenant == "" {
		return cfg
	}
	headers := map[string]config.Header{}
	if cfg.HTTPHeaders != nil {
		for k, v := range cfg.HTTPHeaders.Headers {
			// Header names are case-insensitive: a key spelled otherwise would send a second value.
			if !strings.EqualFold(k, header) {
				headers[k] = v
			}
		}
	}
	headers[header] = config.Header{Values: []string{tenant}}
	cfg.HTTPHeaders = &config.Headers{Headers: headers}
	return cfg
}

// RoundTripper builds the transport of cfg with prometheus/common (authorization, basic auth,
// OAuth2, TLS, headers), named for its metrics and logs.
func RoundTripper(cfg config.HTTPClientConfig) (http.RoundTripper, error) {
	return config.NewRoundTripperFromConfig(cfg, "perfexp", config.WithUserAgent("perfexp"))
}

// ServerKey names one Prometheus (or any metrics backend) however its URL is written: scheme
// and host in lower case, the scheme's default port and trailing slashes dropped. The analysis
// slots are shared per key, and the operator's own credentials go only to its own URL's key.
func ServerKey(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	scheme, host, port := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname()), u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + strings.TrimRight(u.EscapedPath(), "/")
}
