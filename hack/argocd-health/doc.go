// Package argocdhealth runs perfexp's Argo CD health checks (config/gitops) through Argo CD's own
// code, imported as a Go module: the health assessment of its application controller
// (gitops-engine's health.GetResourceHealth with util/lua's ResourceHealthOverrides, which run
// the script in Argo CD's Lua VM), and the settings code that reads the checks from argocd-cm.
// It is a module of its own so that Argo CD's dependencies stay out of perfexp's; run it with
// `make argocd-health` (docs/gitops.md).
package argocdhealth
