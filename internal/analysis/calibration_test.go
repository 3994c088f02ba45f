package analysis

import (
	"k8s.io/apimachinery/pkg/api/resource"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// quietEnvironment is the calibration of an environment whose runs of one configuration agree
// to 0.1 %: the crafted comparisons test what one run's intervals decide, so they declare the
// noise between runs negligible instead of taking the conservative default.
func quietEnvironment() *perfexpv1alpha1.BetweenRunNoise {
	sd := resource.MustParse("0.1")
	return &perfexpv1alpha1.BetweenRunNoise{SDPercent: &sd, Source: "crafted: a quiet environment"}
}
