package gitops_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/perfexp/perfexp/internal/testenv"
)

// merge-argocd-cm.sh against a real API server and an argocd-cm that already holds someone
// else's ignoreDifferences for Deployments and settings of its own: perfexp's health checks
// and the StatefulSet entry are added, the Deployment entry and every other key are left as
// they were (exit 3 with the line to add), and once the line is added by hand a second run
// changes nothing and exits 0. A plain `kubectl patch --type merge` of argocd-cm.yaml would
// have replaced the Deployment entry.
func TestMergeArgoCDConfigMap(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on PATH")
	}
	ctrl.SetLogger(logr.Discard())
	env := testenv.Start(t)
	env.PlainNamespace(t, "argocd")
	theirs := "jqPathExpressions:\n  - .spec.template.spec.initContainers[] | select(.name == \"istio-init\")\n"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"}, Data: map[string]string{
		"url": "https://argocd.example.com",
		"resource.customizations.ignoreDifferences.apps_Deployment": theirs,
	}}
	if err := env.Client.Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	kubeconfig := writeKubeconfig(t, env)

	run := func() (string, int) {
		cmd := exec.CommandContext(context.Background(), "bash", "merge-argocd-cm.sh")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "PATH="+filepath.Dir(kubectl)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out), 0
	}
	get := func() map[string]string {
		got := &corev1.ConfigMap{}
		if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), got); err != nil {
			t.Fatal(err)
		}
		return got.Data
	}

	out, code := run()
	if code != 3 || !strings.Contains(out, "add perfexp to it by hand") {
		t.Fatalf("first run: exit %d, want 3 and the line to add:\n%s", code, out)
	}
	data := get()
	if data["resource.customizations.ignoreDifferences.apps_Deployment"] != theirs || data["url"] != "https://argocd.example.com" {
		t.Errorf("someone else's settings were changed: %v", data)
	}
	for _, key := range []string{"resource.customizations.health.perfexp.dev_PerfExperiment", "resource.customizations.health.perfexp.dev_PerfSweep"} {
		if data[key] != healthScript(t, strings.TrimPrefix(key, healthKey)) {
			t.Errorf("%s is not argocd-cm.yaml's", key)
		}
	}
	if !strings.Contains(data["resource.customizations.ignoreDifferences.apps_StatefulSet"], "- perfexp") {
		t.Errorf("the StatefulSet entry was not added: %q", data["resource.customizations.ignoreDifferences.apps_StatefulSet"])
	}

	// The person merges by hand, as the script said; the next run leaves everything alone.
	if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["resource.customizations.ignoreDifferences.apps_Deployment"] = theirs + "managedFieldsManagers:\n  - perfexp\n"
	if err := env.Client.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	before := get()
	if out, code := run(); code != 0 || strings.Contains(out, "add ") || strings.Contains(out, "update ") {
		t.Fatalf("second run: exit %d:\n%s", code, out)
	}
	after := get()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("the second run changed %s", k)
		}
	}
}

func writeKubeconfig(t *testing.T, env *testenv.Env) string {
	t.Helper()
	c := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: c.CertData, ClientKeyData: c.KeyData, Token: c.BearerToken}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}
