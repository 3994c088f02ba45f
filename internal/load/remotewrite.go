package load

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// The k6 runners' side of spec.analysis.prometheusAuth: k6's experimental-prometheus-rw output
// (k6 v1.8) reads its credentials from its environment. Every secret value reaches the
// container by reference (secretKeyRef, a Secret volume), so the Job and TestRun specs hold
// Secret names only. k6 has no OAuth2 for its remote write: that applies to the analysis' reads
// only (docs/backends.md).

// remoteWriteTLSDir is where a runner mounts its remote-write client certificate and key.
const remoteWriteTLSDir = "/var/run/perfexp/remote-write-tls"

const remoteWriteTLSVolume = "remote-write-tls"

// remoteWriteHeaderEnv is the prefix of k6's variables that each add one header to the remote
// write: K6_PROMETHEUS_RW_HEADERS_<Name>.
const remoteWriteHeaderEnv = "K6_PROMETHEUS_RW_HEADERS_"

// remoteWriteAuth is the environment, volumes and mounts that give a runner of exp the remote
// write's credentials and headers, with the tenant header (tenant empty: none) last so it wins.
func remoteWriteAuth(exp *perfexpv1alpha1.PerfExperiment, tenantHeader, tenant string) ([]corev1.EnvVar, []corev1.Volume, []corev1.VolumeMount) {
	var env []corev1.EnvVar
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	var auth *perfexpv1alpha1.PrometheusAuth
	if exp.Spec.Analysis != nil {
		auth = exp.Spec.Analysis.PrometheusAuth
	}
	if auth != nil {
		if auth.BearerToken != nil {
			env = append(env, secretEnv("K6_PROMETHEUS_RW_BEARER_TOKEN", *auth.BearerToken))
		}
		if b := auth.BasicAuth; b != nil {
			env = append(env, secretEnv("K6_PROMETHEUS_RW_USERNAME", b.Username), secretEnv("K6_PROMETHEUS_RW_PASSWORD", b.Password))
		}
		for _, h := range auth.Headers {
			if tenant != "" && strings.EqualFold(h.Name, tenantHeader) {
				continue
			}
			env = append(env, secretEnv(remoteWriteHeaderEnv+h.Name, h.ValueFrom))
		}
		if t := auth.TLS; t != nil && (t.CA != nil || t.Cert != nil && t.Key != nil) {
			var sources []corev1.VolumeProjection
			project := func(ref perfexpv1alpha1.SecretKey, file string) {
				sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name},
					Items:                []corev1.KeyToPath{{Key: ref.Key, Path: file}}}})
			}
			if t.Cert != nil && t.Key != nil {
				project(*t.Cert, "client/tls.crt")
				project(*t.Key, "client/tls.key")
				env = append(env,
					corev1.EnvVar{Name: "K6_PROMETHEUS_RW_CLIENT_CERTIFICATE", Value: path.Join(remoteWriteTLSDir, "client/tls.crt")},
					corev1.EnvVar{Name: "K6_PROMETHEUS_RW_CLIENT_CERTIFICATE_KEY", Value: path.Join(remoteWriteTLSDir, "client/tls.key")})
			}
			if t.CA != nil {
				// k6's output has no CA setting, but k6 is a Go program: Go adds the
				// certificates of every file in SSL_CERT_DIR to the system's bundle file, so the
				// image's own roots stay trusted and the backend's CA joins them.
				project(*t.CA, "ca/ca.crt")
				env = append(env, corev1.EnvVar{Name: "SSL_CERT_DIR", Value: "/etc/ssl/certs:" + path.Join(remoteWriteTLSDir, "ca")})
			}
			vols = append(vols, corev1.Volume{Name: remoteWriteTLSVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}})
			mounts = append(mounts, corev1.VolumeMount{Name: remoteWriteTLSVolume, MountPath: remoteWriteTLSDir, ReadOnly: true})
		}
	}
	if tenant != "" {
		env = append(env, corev1.EnvVar{Name: remoteWriteHeaderEnv + tenantHeader, Value: tenant})
	}
	return env, vols, mounts
}

func secretEnv(name string, ref perfexpv1alpha1.SecretKey) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: ref.Name}, Key: ref.Key,
	}}}
}

// k6Env is the environment of a unit's k6 container: perfexp's remote-write settings and
// credentials, then the scenario's own env, which replaces a variable of the same name.
func (r *Runner) k6Env(exp *perfexpv1alpha1.PerfExperiment, user []perfexpv1alpha1.EnvVar) ([]corev1.EnvVar, []corev1.Volume, []corev1.VolumeMount) {
	header, tenant := r.opts.Tenants.For(exp.Namespace)
	auth, vols, mounts := remoteWriteAuth(exp, header, tenant)
	base := append(K6Env(RemoteWriteURL(exp, r.opts.RemoteWriteURL), nil), auth...)
	return mergeEnv(base, toEnv(user)), vols, mounts
}
