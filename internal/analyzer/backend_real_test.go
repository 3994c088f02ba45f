package analyzer_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/analysis/promtest"
	"github.com/perfexp/perfexp/internal/analyzer"
	"github.com/perfexp/perfexp/internal/step"
	"github.com/perfexp/perfexp/internal/testenv"
)

// backendRun is one experiment's analysis against a backend that asks for credentials: its
// k6 series written, the experiment stored in Analyzing, and the analyzer's log kept.
type backendRun struct {
	env  *testenv.Env
	ns   string
	exp  *perfexpv1alpha1.PerfExperiment
	an   *analyzer.PrometheusAnalyzer
	mu   sync.Mutex
	logs strings.Builder
}

const backendRequests = 2 * 40 // per instance: 40 flushes of two requests

func newBackendRun(t *testing.T, env *testenv.Env, prom *promtest.Server, nsName string) *backendRun {
	t.Helper()
	ns := env.Namespace(t, nsName)
	end := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	start := end.Add(-4 * time.Minute)
	const testID = "backend-run"
	s := promtest.NewK6Series(promtest.K6Labels(testID, "checkinout", "check-out", "0", true))
	for i := 1; i <= 40; i++ {
		s.Flush(start.Add(time.Duration(i)*5*time.Second), 0.020, 0.030)
	}
	prom.Write(t, s.Series())

	exp := experiment(ns, "behind-auth")
	exp.Spec.Analysis = &perfexpv1alpha1.Analysis{PrometheusURL: prom.URL}
	mustCreate(t, env.Client, exp)
	exp.Status = perfexpv1alpha1.PerfExperimentStatus{
		Phase: perfexpv1alpha1.PhaseAnalyzing, TestID: testID,
		Window: &perfexpv1alpha1.Window{Start: &metav1.Time{Time: start}, End: &metav1.Time{Time: end}},
	}
	if err := env.Client.Status().Update(t.Context(), exp); err != nil {
		t.Fatal(err)
	}
	r := &backendRun{env: env, ns: ns, exp: get(t, env.Client, ns, exp.Name)}
	r.an = &analyzer.PrometheusAnalyzer{Client: env.Client, PrometheusURL: "http://operator-default.monitoring:9090",
		AllowedPrometheusURLs: []string{prom.URL}, Clock: clocktesting.NewFakePassiveClock(end.Add(time.Minute))}
	return r
}

func (r *backendRun) withAuth(auth *perfexpv1alpha1.PrometheusAuth) *perfexpv1alpha1.PerfExperiment {
	exp := r.exp.DeepCopy()
	exp.Spec.Analysis.PrometheusAuth = auth
	return exp
}

func (r *backendRun) analyze(t *testing.T, exp *perfexpv1alpha1.PerfExperiment) step.Result {
	t.Helper()
	res, err := r.an.Analyze(r.logged(t), exp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (r *backendRun) precheck(t *testing.T, exp *perfexpv1alpha1.PerfExperiment) step.Result {
	t.Helper()
	res, err := r.an.CheckQueries(r.logged(t), exp)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (r *backendRun) logged(t *testing.T) context.Context {
	sink := funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.logs.WriteString(prefix + " " + args + "\n")
	}, funcr.Options{Verbosity: 10})
	return log.IntoContext(t.Context(), sink)
}

// leaks fails the test when secret appears in the experiment's status, its report ConfigMap,
// the namespace's events or the analyzer's log.
func (r *backendRun) leaks(t *testing.T, exp *perfexpv1alpha1.PerfExperiment, secret string) {
	t.Helper()
	status, _ := json.Marshal(exp.Status)
	places := map[string]string{"status": string(status), "log": r.logs.String()}
	if exp.Status.ReportRef != nil {
		cm := &corev1.ConfigMap{}
		if err := r.env.Client.Get(t.Context(), client.ObjectKey{Namespace: r.ns, Name: exp.Status.ReportRef.Name}, cm); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(cm)
		places["report"] = string(b)
	}
	events := &corev1.EventList{}
	if err := r.env.Client.List(t.Context(), events, client.InNamespace(r.ns)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(events)
	places["events"] = string(b)
	for where, text := range places {
		if strings.Contains(text, secret) {
			t.Errorf("the secret value appears in the %s", where)
		}
	}
	if places["report"] == "" || !strings.Contains(places["report"], "check-out") {
		t.Errorf("no report to search")
	}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// A Prometheus that refuses unauthenticated requests (--web.config.file with basic_auth_users):
// without credentials the analysis fails naming the refusal instead of waiting for an
// "unavailable" Prometheus; a missing Secret or a wrong password fails before the run; with
// the Secret's credentials the results are read, and the password is in none of the status,
// the report, the events or the log.
func TestAnalysisReadsAPrometheusThatRequiresBasicAuth(t *testing.T) {
	env := testenv.Start(t)
	const user, password = "perfexp", "s3cret-read-password-7f3a"
	prom := promtest.StartWith(t, promtest.Options{WebConfig: promtest.BasicAuthWebConfig(t, user, password), Client: promtest.BasicAuthClient(user, password)})
	if resp, err := http.Get(prom.URL + "/api/v1/query?query=1"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the server answers an unauthenticated query with %v, %v; want 401", resp, err)
	}
	r := newBackendRun(t, env, prom, "basic")
	basic := func(secretName, key string) *perfexpv1alpha1.PrometheusAuth {
		return &perfexpv1alpha1.PrometheusAuth{BasicAuth: &perfexpv1alpha1.BasicAuth{
			Username: perfexpv1alpha1.SecretKey{Name: secretName, Key: "username"}, Password: perfexpv1alpha1.SecretKey{Name: secretName, Key: key}}}
	}
	mustCreate(t, env.Client, secret(r.ns, "prom-read", map[string]string{"username": user, "password": password, "old-password": "not-it"}))

	t.Run("without credentials the analysis fails as unauthorized", func(t *testing.T) {
		res := r.analyze(t, r.exp.DeepCopy())
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusUnauthorized || !strings.Contains(res.Failure.Message, "401") {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("a Secret that does not exist fails before the run, naming it", func(t *testing.T) {
		res := r.precheck(t, r.withAuth(basic("prom-reed", "password")))
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusAuthInvalid ||
			!strings.Contains(res.Failure.Message, "Secret prom-reed, which does not exist in namespace "+r.ns) {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("a key the Secret does not have fails before the run", func(t *testing.T) {
		res := r.precheck(t, r.withAuth(basic("prom-read", "passwd")))
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusAuthInvalid || !strings.Contains(res.Failure.Message, `key "passwd"`) {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("a wrong password fails before the run", func(t *testing.T) {
		res := r.precheck(t, r.withAuth(basic("prom-read", "old-password")))
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusUnauthorized {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("with the Secret's credentials the results are read and the password stays secret", func(t *testing.T) {
		exp := r.withAuth(basic("prom-read", "password"))
		if res := r.precheck(t, exp); res.Failure != nil {
			t.Fatalf("precheck: %+v", res.Failure)
		}
		res := r.analyze(t, exp)
		if !res.Done || exp.Status.Results == nil || *exp.Status.Results.Scenarios[0].Requests != backendRequests {
			t.Fatalf("got %+v, results %+v", res, exp.Status.Results)
		}
		if len(exp.Status.Results.BackendWarnings) != 0 {
			t.Errorf("warnings from a plain Prometheus: %v", exp.Status.Results.BackendWarnings)
		}
		r.leaks(t, exp, password)
	})
}

// A Prometheus that requires a client certificate signed by its CA (tls_server_config with
// RequireAndVerifyClientCert): a client without one is refused; the analysis reads with the
// CA, certificate and key of the experiment's Secret, and the key is nowhere it should not be.
func TestAnalysisReadsAPrometheusThatRequiresMTLS(t *testing.T) {
	env := testenv.Start(t)
	pki := promtest.NewPKI(t)
	prom := promtest.StartWith(t, promtest.Options{WebConfig: pki.WebConfig(), TLS: true, Client: pki.Client(t)})
	r := newBackendRun(t, env, prom, "mtls")
	mustCreate(t, env.Client, secret(r.ns, "prom-tls", map[string]string{"ca.crt": string(pki.CA), "tls.crt": string(pki.ClientCert), "tls.key": string(pki.ClientKey)}))
	ref := func(k string) *perfexpv1alpha1.SecretKey { return &perfexpv1alpha1.SecretKey{Name: "prom-tls", Key: k} }

	t.Run("with the CA alone the server refuses the connection and the analysis waits, naming it", func(t *testing.T) {
		res := r.analyze(t, r.withAuth(&perfexpv1alpha1.PrometheusAuth{TLS: &perfexpv1alpha1.TLSAuth{CA: ref("ca.crt")}}))
		// Under TLS 1.3 the server's "certificate required" alert comes after the client's
		// handshake is done, so the client may meet it as a closed connection on its first
		// write ("broken pipe", "connection reset") before it reads the alert.
		refused := strings.Contains(res.Waiting, "certificate") || strings.Contains(res.Waiting, "broken pipe") ||
			strings.Contains(res.Waiting, "connection reset")
		if res.Done || res.Failure != nil || !refused || !strings.Contains(res.Waiting, "to answer") {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("a CA key that holds no certificate fails before the run", func(t *testing.T) {
		res := r.precheck(t, r.withAuth(&perfexpv1alpha1.PrometheusAuth{TLS: &perfexpv1alpha1.TLSAuth{CA: ref("tls.key")}}))
		if res.Failure == nil || res.Failure.Reason != perfexpv1alpha1.ReasonPrometheusAuthInvalid {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("with the client certificate the results are read", func(t *testing.T) {
		exp := r.withAuth(&perfexpv1alpha1.PrometheusAuth{TLS: &perfexpv1alpha1.TLSAuth{CA: ref("ca.crt"), Cert: ref("tls.crt"), Key: ref("tls.key")}})
		if res := r.precheck(t, exp); res.Failure != nil {
			t.Fatalf("precheck: %+v", res.Failure)
		}
		res := r.analyze(t, exp)
		if !res.Done || exp.Status.Results == nil || *exp.Status.Results.Scenarios[0].Requests != backendRequests {
			t.Fatalf("got %+v, results %+v", res, exp.Status.Results)
		}
		key := strings.Split(strings.TrimSpace(string(pki.ClientKey)), "\n")[1]
		r.leaks(t, exp, key)
	})
}
