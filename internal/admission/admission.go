// Package admission runs, in process, what the API server runs on a create of one of
// perfexp's kinds: the CRD's OpenAPI schema (pruning, defaults, types, bounds, formats, list
// types) and its x-kubernetes-validations (CEL), with the API server's own code
// (k8s.io/apiextensions-apiserver). A fuzz loop can then ask "would kubectl apply accept this
// spec?" with no API server to start or call (BenchmarkCreate in internal/testenv/admission
// measures one answer), and kubectl perfexp plan reads a manifest as the API server would
// store it, offline. ForKind takes the CRDs built into the binary (config/crd); Load reads one
// from a file.
//
// The ValidatingAdmissionPolicies of config/policy are not evaluated: they ask the API
// server's authorizer about the person who applies the object, which this package has no
// model of. An admitted object here is one the API server accepts from a person who holds
// every right the policy asks for; the policies have envtest tests of their own
// (internal/access).
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiextensionsvalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	crdfiles "github.com/perfexp/perfexp/config/crd"
)

// CRD is one version of a CustomResourceDefinition, ready to admit objects.
type CRD struct {
	kind       string
	structural *structuralschema.Structural
	schema     apiextensionsvalidation.SchemaValidator
	cel        *cel.Validator
}

// Load reads a CRD manifest (config/crd/bases/*.yaml) and prepares its served version.
func Load(path string) (*CRD, error) {
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// ForKind prepares the built-in CRD (config/crd/bases, as this binary was built) of one of
// perfexp's kinds; an error names the kinds there are.
func ForKind(kind string) (*CRD, error) {
	files, err := fs.Glob(crdfiles.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	var kinds []string
	for _, f := range files {
		data, err := crdfiles.Bases.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c, err := Parse(f, data)
		if err != nil {
			return nil, err
		}
		if c.kind == kind {
			return c, nil
		}
		kinds = append(kinds, c.kind)
	}
	return nil, fmt.Errorf("perfexp has no kind %s; its kinds are %s", kind, strings.Join(kinds, ", "))
}

// Parse prepares the served version of a CRD manifest; name says where it came from, for
// errors.
func Parse(name string, data []byte) (*CRD, error) {
	path := name
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("%s: converting the schema of %s: %w", path, v.Name, err)
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("%s: the schema of %s is not structural: %w", path, v.Name, err)
		}
		validator, _, err := apiextensionsvalidation.NewSchemaValidator(internal)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return &CRD{
			kind:       crd.Spec.Names.Kind,
			structural: structural,
			schema:     validator,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}, nil
	}
	return nil, fmt.Errorf("%s: no served version with a schema", path)
}

// Create does to obj what the API server does to the body of a create before it stores it:
// drops unknown fields, fills in defaults and validates. obj is changed in place (it is then
// the object as stored); the errors are those the API server would answer with, none when it
// would accept obj. Like the API server, CEL rules are not run while the schema already
// refused a value in a way that blocks them (a missing, unsupported, too long or mistyped one).
func (c *CRD) Create(ctx context.Context, obj *unstructured.Unstructured) field.ErrorList {
	if obj.GetKind() != c.kind {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), obj.GetKind(), "want "+c.kind)}
	}
	// The API server reads the body as JSON, whole numbers as int64; a YAML or typed object may
	// hold float64s, which CEL would refuse as the wrong type.
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	obj.Object = map[string]any{}
	if err := utiljson.Unmarshal(data, &obj.Object); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	structuralpruning.Prune(obj.Object, c.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj.Object, c.structural)
	structuraldefaulting.Default(obj.Object, c.structural)

	var errs field.ErrorList
	errs = append(errs, validation.ValidateObjectMetaAccessor(obj, true, validation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiextensionsvalidation.ValidateCustomResource(nil, obj.UnstructuredContent(), c.schema)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj.Object, c.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, obj.Object)...)
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	celErrs, _ := c.cel.Validate(ctx, nil, c.structural, obj.Object, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}
