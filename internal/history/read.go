package history

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/judge"
)

// ReadNoise reads the PerfHistory of each given run's configuration (in namespace, named by Key
// with scripts) and estimates their pooled between-run noise at now (BetweenRunNoise). A
// history that does not exist yet gives nothing; nil is returned when none gives an estimate.
// Every one-run comparison learns its noise through here (the analysis of an experiment, a
// sweep's arms, `kubectl perfexp compare`), so the same two runs get the same noise wherever
// they are compared. The runs compared ran the same load shape (a comparison refuses others),
// so one set of scripts keys all their histories.
func ReadNoise(ctx context.Context, reader client.Reader, namespace string, scripts map[string]string, now time.Time,
	runs ...*perfexpv1alpha1.PerfExperiment) (*judge.HistoryNoise, error) {
	hs := make([]*perfexpv1alpha1.PerfHistory, 0, len(runs))
	seen := map[string]bool{}
	for _, e := range runs {
		if e == nil {
			continue
		}
		name, _ := Key(e, scripts)
		if seen[name] {
			continue
		}
		seen[name] = true
		h := &perfexpv1alpha1.PerfHistory{}
		switch err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, h); {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return nil, err
		}
		hs = append(hs, h)
	}
	return BetweenRunNoise(hs, now, judge.HistoryNoiseSettings{}), nil
}
