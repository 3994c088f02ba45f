package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// fingerprinted is what makes two runs comparable. The variant's description is left out:
// rewording it does not change what ran.
type fingerprinted struct {
	Namespace string                   `json:"namespace"`
	Load      []result.ScenarioShape   `json:"load"`
	Variant   *perfexpv1alpha1.Variant `json:"variant,omitempty"`
}

// Fingerprint is the hex SHA-256 of what makes runs comparable: the target namespace, every
// scenario's name, script hash and load shape (result.LoadShape), and the variant. scripts
// maps a scenario to its script's text where it was read (ConfigMap scripts); a script that
// could not be read hashes as unknown, which still matches the next run whose script is gone.
func Fingerprint(exp *perfexpv1alpha1.PerfExperiment, scripts map[string]string) string {
	f := fingerprinted{Namespace: exp.TargetNamespace(), Load: result.LoadShape(exp.Spec.Load, scripts)}
	if exp.Spec.Variant != nil {
		v := exp.Spec.Variant.DeepCopy()
		v.Description = ""
		// A variant that only describes (no change) ran the environment as it is.
		if b, err := json.Marshal(v); err == nil && string(b) != "{}" {
			f.Variant = v
		}
	}
	// json.Marshal of these types is deterministic (struct field order, sorted map keys).
	b, err := json.Marshal(f)
	if err != nil {
		// Only unsupported values fail to marshal, and the API types hold none.
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Key is the PerfHistory a run's record goes to: its name and the fingerprint stored with it.
// spec.analysis.historyKey names the history itself; otherwise it is "runs-" and the first
// 16 hex digits of the fingerprint (64 bits: a collision among one namespace's histories is
// not a practical worry).
func Key(exp *perfexpv1alpha1.PerfExperiment, scripts map[string]string) (name, fingerprint string) {
	if a := exp.Spec.Analysis; a != nil && a.HistoryKey != "" {
		return a.HistoryKey, "historyKey:" + a.HistoryKey
	}
	fp := Fingerprint(exp, scripts)
	return "runs-" + fp[:16], fp
}
