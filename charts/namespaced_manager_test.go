package charts_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/manager"
	"github.com/perfexp/perfexp/internal/testenv"
)

// The namespaced install as a user would run it, on a real API server: the chart's RBAC in
// scope: namespaced applied as rendered, and the manager started with the chart's own args as
// its service account, so every read and write meets the API server's authorizer with only
// the RoleBindings of team-a and team-b (and the metrics reviews). An experiment in team-a
// targeting team-b runs; one targeting shop (opted in by its label, but not watched) is
// refused with Ready=False/NamespaceNotAllowed; one created in shop is never touched. The
// secured metrics refuse a scraper without a token or without get on /metrics, and serve one
// bound to the chart's metrics-reader ClusterRole.
func TestNamespacedManagerOnAnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := t.Context()
	for _, ns := range []string{releaseNamespace, "team-a", "team-b"} {
		env.PlainNamespace(t, ns)
	}
	env.Namespace(t, "shop") // opted in by its label, yet outside the install

	r := render(t, namespacedValues())
	for _, o := range r.objects {
		if o.GetKind() == "CustomResourceDefinition" {
			continue // installed by the test environment
		}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner("helm"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}

	opts, _ := managerArgs(t, stringArgs(container(t, r.find("Deployment", releaseNamespace, "perfexp-manager"))))
	metricsPort := freePort(t)
	opts.MetricsAddr = fmt.Sprintf("127.0.0.1:%d", metricsPort)
	opts.ProbeAddr = "0"
	opts.LeaseNamespace = releaseNamespace // the pod's namespace, from POD_NAMESPACE in the chart
	if !opts.MetricsSecure {
		t.Fatal("the chart's default args do not secure the metrics")
	}
	logFile := startManager(t, env.User(t, "system:serviceaccount:"+releaseNamespace+":perfexp-manager",
		"system:serviceaccounts", "system:serviceaccounts:"+releaseNamespace), opts)

	refused := experiment("team-a", "to-shop", "shop")
	allowed := experiment("team-a", "to-team-b", "team-b")
	allowed.Spec.Queue = "perf-shared" // a queue named like no namespace: read through the Namespace reader
	unseen := experiment("shop", "in-shop", "shop")
	for _, e := range []*perfexpv1alpha1.PerfExperiment{refused, allowed, unseen} {
		if err := env.Client.Create(ctx, e); err != nil {
			t.Fatalf("creating %s/%s: %v", e.Namespace, e.Name, err)
		}
	}

	testenv.Eventually(t, 60*time.Second, "the experiment targeting shop refused", func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(refused), got); err != nil {
			return err
		}
		c := apimeta.FindStatusCondition(got.Status.Conditions, perfexpv1alpha1.ConditionReady)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != perfexpv1alpha1.ReasonNamespaceNotAllowed {
			return fmt.Errorf("phase %q, Ready %+v", got.Status.Phase, c)
		}
		if !strings.Contains(c.Message, "installed for namespaces team-a, team-b only") {
			return fmt.Errorf("the refusal does not say why: %q", c.Message)
		}
		return nil
	})
	testenv.Eventually(t, 60*time.Second, "the experiment targeting team-b running its load", func() error {
		got := &perfexpv1alpha1.PerfExperiment{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(allowed), got); err != nil {
			return err
		}
		if got.Status.Phase != perfexpv1alpha1.PhaseRunning {
			return fmt.Errorf("phase %q, conditions %+v", got.Status.Phase, got.Status.Conditions)
		}
		jobs := &batchv1.JobList{}
		if err := env.Client.List(ctx, jobs); err != nil {
			return err
		}
		if len(jobs.Items) == 0 {
			return errors.New("running without a load Job")
		}
		return nil
	})
	got := &perfexpv1alpha1.PerfExperiment{}
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(unseen), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) > 0 || got.Status.Phase != "" || len(got.Status.Conditions) > 0 {
		t.Errorf("the experiment in shop, outside the install, was touched: finalizers %v, phase %q, conditions %v",
			got.Finalizers, got.Status.Phase, got.Status.Conditions)
	}

	// The snapshot key was created as a Secret of the operator's namespace, with the chart's
	// RBAC (no ConfigMap holds it, which whoever reads ConfigMaps there could read).
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: manager.SnapshotKeySecret}, &corev1.Secret{}); err != nil {
		t.Errorf("the snapshot key's Secret: %v", err)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: releaseNamespace, Name: manager.SnapshotKeySecret}, &corev1.ConfigMap{}); err == nil {
		t.Error("the snapshot key was written to a ConfigMap")
	}

	// Nothing the manager did so far was refused by RBAC: no read, write or Event retried in vain.
	if log, _ := os.ReadFile(logFile); strings.Contains(string(log), "forbidden") {
		var lines []string
		for _, l := range strings.Split(string(log), "\n") {
			if strings.Contains(l, "forbidden") {
				lines = append(lines, l)
			}
		}
		t.Errorf("the manager was refused by RBAC %d times, first: %s", len(lines), lines[0])
	}

	// A tenant of team-a, who may create experiments there and holds no right in team-b, may
	// not aim a run at team-b's environment, not even one with no variant.
	t.Run("a tenant without a right in the other's environment", func(t *testing.T) {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tenant-a"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"perfexp.dev"}, Resources: []string{"perfexperiments", "perfsweeps"}, Verbs: []string{"create", "get"}}}}
		binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "tenant-a"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "tenant-a"},
			Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "tenant-a"}}}
		for _, o := range []client.Object{role, binding} {
			if err := env.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		tenant, err := client.New(env.User(t, "tenant-a"), client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		loadOnly := experiment("team-a", "load-only-on-team-b", "team-b")
		loadOnly.Spec.Priority = 1000
		want := "you (user tenant-a) may not create perfexperiments.perfexp.dev in namespace team-b, the right to run experiments against that environment"
		testenv.Eventually(t, 30*time.Second, "the tenant's run on team-b refused", func() error {
			err := tenant.Create(ctx, loadOnly.DeepCopy(), client.DryRunAll)
			switch {
			case err == nil:
				return fmt.Errorf("admitted, want a refusal saying %q", want)
			case !strings.Contains(err.Error(), want):
				return fmt.Errorf("%w; want a refusal saying %q", err, want)
			}
			return nil
		})
		if err := tenant.Create(ctx, experiment("team-a", "load-only-at-home", ""), client.DryRunAll); err != nil {
			t.Errorf("the tenant's run on its own namespace: %v", err)
		}
	})

	t.Run("secured metrics", func(t *testing.T) {
		url := fmt.Sprintf("https://127.0.0.1:%d/metrics", metricsPort)
		cs := kubernetes.NewForConfigOrDie(env.Config)
		token := func(name string) string {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name}}
			if err := env.Client.Create(ctx, sa); err != nil {
				t.Fatal(err)
			}
			tr, err := cs.CoreV1().ServiceAccounts("team-a").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("a token for %s: %v", name, err)
			}
			return tr.Status.Token
		}
		stranger, scraper := token("stranger"), token("scraper")
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "scraper-reads-perfexp-metrics"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "perfexp-metrics-reader"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "team-a", Name: "scraper"}},
		}
		if err := env.Client.Create(ctx, binding); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			token    string
			want     int
			wantBody string
		}{
			{name: "no token", want: http.StatusUnauthorized},
			{name: "a token without get on /metrics", token: stranger, want: http.StatusForbidden},
			{name: "a token bound to perfexp-metrics-reader", token: scraper, want: http.StatusOK, wantBody: "perfexp_"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				status, body := scrape(t, url, tt.token)
				if status != tt.want || !strings.Contains(body, tt.wantBody) {
					t.Fatalf("status %d (want %d), %d bytes (want %q)", status, tt.want, len(body), tt.wantBody)
				}
			})
		}
	})
}

// experiment is a minimal experiment in ns targeting target: no variant, a short inline load.
func experiment(ns, name, target string) *perfexpv1alpha1.PerfExperiment {
	return &perfexpv1alpha1.PerfExperiment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: perfexpv1alpha1.PerfExperimentSpec{
			TargetNamespace: target,
			Load: perfexpv1alpha1.Load{Scenarios: []perfexpv1alpha1.Scenario{{
				Name:     "smoke",
				Script:   perfexpv1alpha1.ScriptSource{Inline: "export default function () {}"},
				VUs:      ptrTo(int32(1)),
				Duration: &metav1.Duration{Duration: time.Minute},
			}}},
		},
	}
}

func ptrTo[T any](v T) *T { return &v }

// startManager runs the operator with cfg's rights until the test ends; its log is shown when
// the test fails.
func startManager(t *testing.T, cfg *rest.Config, opts manager.Options) (logFile string) {
	t.Helper()
	logFile = filepath.Join(t.TempDir(), "manager.log")
	f, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	logger := zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger) // client-go's own complaints (a refused Event) land in the same log
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctx, cfg, opts) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the manager did not stop within 30s")
		}
		_ = f.Close()
		if t.Failed() {
			log, _ := os.ReadFile(logFile)
			t.Logf("manager log:\n%s", log)
		}
	})
	return logFile
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// scrape reads url as Prometheus would (the certificate is the manager's self-signed one).
func scrape(t *testing.T, url, token string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed
	var status int
	var body string
	testenv.Eventually(t, 30*time.Second, "the metrics endpoint answering", func() error {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = res.Body.Close() }()
		b, err := io.ReadAll(res.Body)
		status, body = res.StatusCode, string(b)
		return err
	})
	return status, body
}
