package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadTenantsFile(t *testing.T) {
	tests := []struct {
		name, content string
		want          map[string]string
		wantErr       string
	}{
		{"a map of namespace: tenant", "shop: team-shop\npayments: team-pay\n", map[string]string{"shop": "team-shop", "payments": "team-pay"}, ""},
		{"an empty tenant is refused", "shop: ''\n", nil, "empty tenant"},
		{"a list is refused", "- shop\n", nil, "namespace: tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadTenantsFile(write(t, "tenants.yaml", tt.content))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) || got["shop"] != tt.want["shop"] {
				t.Fatalf("got %v, %v", got, err)
			}
		})
	}
}

// The operator's file is Prometheus' own http_config, with the *_file forms resolved against
// the file's directory (a mounted Secret beside it).
func TestLoadHTTPConfigFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "http.yaml")
	if err := os.WriteFile(cfgFile, []byte("authorization:\n  credentials_file: token\nhttp_headers:\n  X-Scope-OrgID:\n    values: [ops]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadHTTPConfigFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Authorization == nil || cfg.Authorization.CredentialsFile != filepath.Join(dir, "token") || cfg.HTTPHeaders.Headers["X-Scope-OrgID"].Values[0] != "ops" {
		t.Fatalf("got %+v", cfg)
	}
	if _, err := LoadHTTPConfigFile(write(t, "bad.yaml", "basic_auth:\n  username: a\nauthorization:\n  credentials: b\n")); err == nil {
		t.Fatal("a configuration with two kinds of credentials was accepted")
	}
	tenanted := WithTenant(cfg, DefaultTenantHeader, "team-shop")
	if got := tenanted.HTTPHeaders.Headers["X-Scope-OrgID"].Values; len(got) != len(tenanted.HTTPHeaders.Headers) || len(got) != 1 || got[0] != "team-shop" {
		t.Fatalf("tenant header %v", tenanted.HTTPHeaders.Headers)
	}
}
