package load_test

import (
	"strings"
	"testing"

	"github.com/perfexp/perfexp/internal/load"
)

// What a setup or k6 pod may print that must not reach the experiment's status: each secret
// is gone from the failure message, and what it was found by is still there.
func TestRedact(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	tests := []struct {
		name   string
		log    string
		secret string
		keeps  string
	}{
		{"a service-account token printed by cat", "+ cat /var/run/secrets/kubernetes.io/serviceaccount/token\n" + jwt + "\nexit 1", jwt, "exit 1"},
		{"a password in the environment", "DB_PASSWORD=hunter2-but-longer\nPATH=/bin", "hunter2-but-longer", "PATH=/bin"},
		{"a token variable", "export GITHUB_TOKEN=ghp_abcdefghijklmnop", "ghp_abcdefghijklmnop", "GITHUB_TOKEN="},
		{"a secret in JSON", `{"client_secret": "s3cr3t-value", "user": "loader"}`, "s3cr3t-value", `"user": "loader"`},
		{"an Authorization header", "> Authorization: Basic dXNlcjpwYXNzd29yZA==\n> Host: api", "dXNlcjpwYXNzd29yZA==", "Host: api"},
		{"a bearer token on its own", "calling with Bearer abc.def-ghi_jkl012345 now", "abc.def-ghi_jkl012345", "calling with Bearer"},
		{"a password in a URL", "connecting to postgres://loader:pa55word@db:5432/library", "pa55word", "postgres://loader:"},
		{"a private key", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\ndone", "MIIEpAIBAAKCAQEA", "done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := load.LogTail([]byte(tt.log), 20, 1500)
			if strings.Contains(got, tt.secret) {
				t.Errorf("the secret %q is still in %q", tt.secret, got)
			}
			if !strings.Contains(got, tt.keeps) || !strings.Contains(got, "[redacted]") {
				t.Errorf("got %q, want %q kept and [redacted] in place of the secret", got, tt.keeps)
			}
		})
	}
	if plain := "level=info msg=\"http_req_duration p95=212ms\" vus=50"; load.LogTail([]byte(plain), 20, 1500) != plain {
		t.Errorf("a log with no secret changed: %q", load.LogTail([]byte(plain), 20, 1500))
	}
}
