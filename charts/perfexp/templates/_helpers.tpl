{{/* Labels every object of the release carries. */}}
{{- define "perfexp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "perfexp.selectorLabels" . }}
{{- end -}}

{{/* The manager's pods; the same labels as config/manager so dashboards find both. */}}
{{- define "perfexp.selectorLabels" -}}
app.kubernetes.io/name: perfexp
app.kubernetes.io/component: manager
{{- end -}}

{{/* The service account and ClusterRole names are those of config/rbac, so the commands of
docs/security.md work whichever way perfexp was installed. */}}
{{- define "perfexp.serviceAccountName" -}}perfexp-manager{{- end -}}

{{/* A comma-separated flag, left out when the list is empty (the flag's own default applies). */}}
{{- define "perfexp.listFlag" -}}
{{- if .list }}
- --{{ .flag }}={{ join "," .list }}
{{- end }}
{{- end -}}

{{/* Whether to render the ServiceMonitor: "auto" follows the cluster's API versions. */}}
{{- define "perfexp.serviceMonitorEnabled" -}}
{{- $v := toString .Values.metrics.serviceMonitor.enabled -}}
{{- if and (ne (toString .Values.metrics.port) "0") (or (eq $v "true") (and (eq $v "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1"))) -}}
true
{{- end -}}
{{- end -}}
