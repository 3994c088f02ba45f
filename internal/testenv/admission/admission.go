// Package admission gives the tests internal/admission's in-process API server admission
// (schema, defaults, CEL rules) of a CRD manifest read from a file; see that package.
package admission

import "github.com/perfexp/perfexp/internal/admission"

// CRD is one version of a CustomResourceDefinition, ready to admit objects.
type CRD = admission.CRD

// Load reads a CRD manifest (config/crd/bases/*.yaml) and prepares its served version.
func Load(path string) (*CRD, error) { return admission.Load(path) }
