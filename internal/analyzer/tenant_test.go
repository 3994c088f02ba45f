package analyzer_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/config"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/testenv"
)

// recordingBackend answers every query with a scalar and keeps the headers that matter to a
// multi-tenant backend.
type recordingBackend struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newRecordingBackend(t *testing.T) *recordingBackend {
	b := &recordingBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen = append(b.seen, "auth="+r.Header.Get("Authorization")+" tenant="+strings.Join(r.Header.Values("X-Scope-Orgid"), ","))
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"1"]}}`)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *recordingBackend) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.seen) == 0 {
		return ""
	}
	return b.seen[len(b.seen)-1]
}

// The operator's credentials go to its own backend only; the tenant its map gives the
// experiment's namespace goes with every read; an experiment may not set that header itself;
// OAuth2 client credentials are exchanged for a token that is sent as a bearer token.
func TestReadsCarryTheRightCredentialsAndTenant(t *testing.T) {
	own, other := newRecordingBackend(t), newRecordingBackend(t)
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		user, pass, _ := r.BasicAuth()
		if r.Form.Get("grant_type") != "client_credentials" || user != "perfexp-client" || pass != "client-secret" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "issued-token", "token_type": "Bearer", "expires_in": 3600})
	}))
	defer tokens.Close()
	operatorCfg := config.DefaultHTTPClientConfig
	operatorCfg.Authorization = &config.Authorization{Type: "Bearer", Credentials: "operator-token"}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(
		secret("perf", "oauth", map[string]string{"id": "perfexp-client", "secret": "client-secret", "tenant": "someone-else"})).Build()
	a := &analyzer.PrometheusAnalyzer{Client: c, PrometheusURL: own.URL, AllowedPrometheusURLs: []string{other.URL}, HTTPConfig: &operatorCfg,
		Tenants: backend.Tenants{ByNamespace: map[string]string{"perf": "team-perf"}}}
	query := []perfexpv1alpha1.CustomQuery{{Name: "one", Query: "vector(1)"}}
	newExp := func(url string, auth *perfexpv1alpha1.PrometheusAuth) *perfexpv1alpha1.PerfExperiment {
		exp := experiment("perf", "tenant")
		exp.Status.TestID = "tenant-1"
		exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: url, PrometheusAuth: auth, Queries: query}
		return exp
	}
	oauth := &perfexpv1alpha1.PrometheusAuth{OAuth2: &perfexpv1alpha1.OAuth2{TokenURL: tokens.URL,
		ClientID: perfexpv1alpha1.SecretKey{Name: "oauth", Key: "id"}, ClientSecret: perfexpv1alpha1.SecretKey{Name: "oauth", Key: "secret"}}}
	tests := []struct {
		name    string
		exp     *perfexpv1alpha1.PerfExperiment
		backend *recordingBackend
		want    string
		reason  string
	}{
		{"the operator's backend gets the operator's token and the namespace's tenant", newExp("", nil), own, "auth=Bearer operator-token tenant=team-perf", ""},
		{"another allowed URL never gets the operator's token", newExp(other.URL, nil), other, "auth= tenant=team-perf", ""},
		{"OAuth2 client credentials become a bearer token", newExp(other.URL, oauth), other, "auth=Bearer issued-token tenant=team-perf", ""},
		{"an experiment may not set the tenant header the operator sets", newExp(other.URL, &perfexpv1alpha1.PrometheusAuth{Headers: []perfexpv1alpha1.SecretHeader{
			{Name: "X-Scope-OrgID", ValueFrom: perfexpv1alpha1.SecretKey{Name: "oauth", Key: "tenant"}}}}), nil, "", perfexpv1alpha1.ReasonPrometheusAuthInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := a.CheckQueries(t.Context(), tt.exp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason != "" {
				if res.Failure == nil || res.Failure.Reason != tt.reason {
					t.Fatalf("got %+v", res)
				}
				return
			}
			if res.Failure != nil {
				t.Fatalf("failed: %+v", res.Failure)
			}
			if got := tt.backend.last(); got != tt.want {
				t.Fatalf("the backend saw %q; want %q", got, tt.want)
			}
		})
	}
}
