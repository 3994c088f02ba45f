// Package v1alpha1 contains the perfexp.dev/v1alpha1 API: PerfExperiment, one declarative
// performance experiment run against an environment.
// +kubebuilder:object:generate=true
// +groupName=perfexp.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "perfexp.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the Go types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &PerfExperiment{}, &PerfExperimentList{}, &PerfSweep{}, &PerfSweepList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
