// Package crd holds perfexp's generated CustomResourceDefinitions (bases/, written by
// `make manifests`) inside the binaries that need them without a cluster: kubectl perfexp plan
// applies their defaults and validation rules to manifests offline.
package crd

import "embed"

// Bases are the CRD manifests of config/crd/bases, one file per kind.
//
//go:embed bases/*.yaml
var Bases embed.FS
