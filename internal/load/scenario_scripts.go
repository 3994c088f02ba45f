package load

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// ScenarioScripts reads the scenarios' ConfigMap scripts by scenario name, for the hashes of the
// load shape (results, history fingerprint). A ConfigMap that is gone leaves its hash unknown
// rather than failing the caller.
func ScenarioScripts(ctx context.Context, reader client.Reader, exp *perfexpv1alpha1.PerfExperiment) (map[string]string, error) {
	scripts := map[string]string{}
	for _, s := range exp.Spec.Load.Scenarios {
		ref := s.Script.ConfigMap
		if ref == nil {
			continue
		}
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, client.ObjectKey{Namespace: exp.Namespace, Name: ref.Name}, cm); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		key := ref.Key
		if key == "" {
			key = "script.js"
		}
		if text, ok := cm.Data[key]; ok {
			scripts[s.Name] = text
		}
	}
	return scripts, nil
}
