package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	metricsbackend "github.com/perfexp/perfexp/internal/backend"
	"github.com/perfexp/perfexp/internal/testexp"
)

// A short k6 run with no requests: its built-in metrics (iterations, VUs) are what reaches the
// backend.
const idleScript = `import { sleep } from 'k6';
export const options = { vus: 1, duration: '3s' };
export default function () { sleep(0.2); }
`

// podEnv is what the kubelet would give a runner of the container env, vols and mounts: each
// secretKeyRef resolved from secrets, each projected volume written to a directory that
// stands in for its mount path.
func podEnv(t *testing.T, env []corev1.EnvVar, vols []corev1.Volume, mounts []corev1.VolumeMount, secrets map[string]map[string]string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	for _, m := range mounts {
		dir := t.TempDir()
		dirs[m.MountPath] = dir
		for _, v := range vols {
			if v.Name != m.Name || v.Projected == nil {
				continue
			}
			for _, src := range v.Projected.Sources {
				for _, item := range src.Secret.Items {
					f := filepath.Join(dir, item.Path)
					if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(f, []byte(secrets[src.Secret.Name][item.Key]), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	out := map[string]string{}
	for _, e := range env {
		v := e.Value
		if e.ValueFrom != nil {
			ref := e.ValueFrom.SecretKeyRef
			v = secrets[ref.Name][ref.Key]
		}
		for mountPath, dir := range dirs {
			v = strings.ReplaceAll(v, mountPath, dir)
		}
		out[e.Name] = v
	}
	return out
}

func authExperiment(url string, auth *perfexpv1alpha1.PrometheusAuth) *perfexpv1alpha1.PerfExperiment {
	exp := testexp.New("shop", "rw", testexp.WithScenarios(testexp.Constant("browse", 1, time.Minute)))
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: url, PrometheusAuth: auth}
	return exp
}

// iterations is how many k6 iterations of testID the server holds, -1 when none.
func iterations(t *testing.T, prom *promtest.Server, testID string) float64 {
	t.Helper()
	v, _, err := prom.API(t).Query(context.Background(), `sum(k6_iterations_total{testid="`+testID+`"})`, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) == 0 {
		return -1
	}
	return float64(vec[0].Value)
}

// The runners' remote write carries spec.analysis.prometheusAuth's basic auth to a real
// Prometheus that refuses unauthenticated writes: the env the Job gets, resolved as the kubelet
// would, is what k6 needs, and samples arrive; without it none do.
func TestRemoteWriteWithBasicAuthReachesAPrometheusThatRefusesOthers(t *testing.T) {
	const user, password = "k6", "s3cret-rw-password"
	prom := promtest.StartWith(t, promtest.Options{WebConfig: promtest.BasicAuthWebConfig(t, user, password), Client: promtest.BasicAuthClient(user, password)})
	secrets := map[string]map[string]string{"rw-creds": {"user": user, "password": password}}
	exp := authExperiment(prom.URL, &perfexpv1alpha1.PrometheusAuth{BasicAuth: &perfexpv1alpha1.BasicAuth{
		Username: perfexpv1alpha1.SecretKey{Name: "rw-creds", Key: "user"}, Password: perfexpv1alpha1.SecretKey{Name: "rw-creds", Key: "password"}}})
	r := &Runner{opts: Options{RemoteWriteURL: "http://unused"}}
	env, vols, mounts := r.k6Env(exp, nil)
	for _, e := range env {
		if strings.Contains(e.Value, password) {
			t.Fatalf("the Job spec holds the password in %s", e.Name)
		}
	}
	resolved := podEnv(t, env, vols, mounts, secrets)
	if resolved["K6_PROMETHEUS_RW_SERVER_URL"] != prom.URL+"/api/v1/write" {
		t.Fatalf("remote write to %q", resolved["K6_PROMETHEUS_RW_SERVER_URL"])
	}

	prom.RunK6(t, promtest.K6Run{Script: idleScript, TestID: "rw-anonymous"})
	if n := iterations(t, prom, "rw-anonymous"); n != -1 {
		t.Fatalf("an unauthenticated remote write landed %v iterations", n)
	}
	prom.RunK6(t, promtest.K6Run{Script: idleScript, TestID: "rw-basic", OutputEnv: resolved})
	if n := iterations(t, prom, "rw-basic"); n <= 0 {
		t.Fatalf("with the Secret's credentials %v iterations arrived", n)
	}
}

// The same with mTLS: the client certificate and the backend's CA reach k6 through a projected
// Secret volume (k6 reads file paths; the CA through SSL_CERT_DIR).
func TestRemoteWriteWithMTLSReachesAPrometheusThatRequiresClientCertificates(t *testing.T) {
	pki := promtest.NewPKI(t)
	prom := promtest.StartWith(t, promtest.Options{WebConfig: pki.WebConfig(), TLS: true, Client: pki.Client(t)})
	secrets := map[string]map[string]string{"rw-tls": {"ca.crt": string(pki.CA), "tls.crt": string(pki.ClientCert), "tls.key": string(pki.ClientKey)}}
	ref := func(k string) *perfexpv1alpha1.SecretKey { return &perfexpv1alpha1.SecretKey{Name: "rw-tls", Key: k} }
	exp := authExperiment(prom.URL, &perfexpv1alpha1.PrometheusAuth{TLS: &perfexpv1alpha1.TLSAuth{CA: ref("ca.crt"), Cert: ref("tls.crt"), Key: ref("tls.key")}})
	r := &Runner{opts: Options{}}
	env, vols, mounts := r.k6Env(exp, nil)
	resolved := podEnv(t, env, vols, mounts, secrets)

	caOnly := map[string]string{"SSL_CERT_DIR": resolved["SSL_CERT_DIR"]}
	prom.RunK6(t, promtest.K6Run{Script: idleScript, TestID: "rw-no-cert", OutputEnv: caOnly})
	if n := iterations(t, prom, "rw-no-cert"); n != -1 {
		t.Fatalf("a remote write without a client certificate landed %v iterations", n)
	}
	prom.RunK6(t, promtest.K6Run{Script: idleScript, TestID: "rw-mtls", OutputEnv: resolved})
	if n := iterations(t, prom, "rw-mtls"); n <= 0 {
		t.Fatalf("with the client certificate %v iterations arrived", n)
	}
}

// A bearer token and the operator's tenant header reach a remote-write endpoint that stands in
// for Mimir's distributor or Thanos Receive (which read X-Scope-OrgID / THANOS-TENANT): k6
// sends both, and the experiment's own header of the tenant's name is dropped for the
// operator's.
func TestRemoteWriteSendsTheBearerTokenAndTheTenantHeader(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen[r.Header.Get("Authorization")+" | tenant="+strings.Join(r.Header.Values("X-Scope-Orgid"), ",")+" | key="+r.Header.Get("X-Api-Key")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()
	secrets := map[string]map[string]string{"rw": {"token": "tok-123", "key": "gateway-key", "tenant": "someone-else"}}
	exp := authExperiment(recv.URL, &perfexpv1alpha1.PrometheusAuth{
		BearerToken: &perfexpv1alpha1.SecretKey{Name: "rw", Key: "token"},
		Headers: []perfexpv1alpha1.SecretHeader{
			{Name: "X-Api-Key", ValueFrom: perfexpv1alpha1.SecretKey{Name: "rw", Key: "key"}},
			{Name: "X-Scope-OrgID", ValueFrom: perfexpv1alpha1.SecretKey{Name: "rw", Key: "tenant"}},
		}})
	r := &Runner{opts: Options{Tenants: metricsbackend.Tenants{ByNamespace: map[string]string{"shop": "team-shop"}}}}
	env, vols, mounts := r.k6Env(exp, nil)
	resolved := podEnv(t, env, vols, mounts, secrets)
	(&promtest.Server{WriteURL: resolved["K6_PROMETHEUS_RW_SERVER_URL"]}).RunK6(t, promtest.K6Run{Script: idleScript, TestID: "rw-bearer", OutputEnv: resolved})
	mu.Lock()
	defer mu.Unlock()
	want := "Bearer tok-123 | tenant=team-shop | key=gateway-key"
	if len(seen) != 1 || seen[want] == 0 {
		t.Fatalf("the endpoint saw %v; want every write with %q", seen, want)
	}
}
