{{/* The chart's name, or nameOverride. */}}
{{- define "perfexp.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The prefix of every name the release creates: fullnameOverride, else the release name when
it already holds the chart's name (release "perfexp" gives perfexp-manager, the names of
config/ and of docs/security.md's commands), else <release>-<name>. Cluster-scoped objects
carry it too, so two releases never write the same ClusterRole or admission policy. */}}
{{- define "perfexp.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "perfexp.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Names of the release's objects. 40 characters of prefix leave room for every suffix. */}}
{{- define "perfexp.managerName" -}}{{ include "perfexp.fullname" . }}-manager{{- end -}}
{{- define "perfexp.environmentPatchName" -}}{{ include "perfexp.fullname" . }}-environment-patch{{- end -}}

{{/* Labels every object of the release carries. */}}
{{- define "perfexp.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{ include "perfexp.selectorLabels" . }}
{{- end -}}

{{/* The Deployment's selector: the labels of config/manager so dashboards find both, and so
helm can adopt a kustomize install (a Deployment's selector cannot change). */}}
{{- define "perfexp.selectorLabels" -}}
app.kubernetes.io/name: perfexp
app.kubernetes.io/component: manager
{{- end -}}

{{/* This release's manager pods only, for the Service, PDB, NetworkPolicy and spread
constraints (two releases may share a namespace). */}}
{{- define "perfexp.podSelectorLabels" -}}
{{ include "perfexp.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The manager's service account: the release's own (<fullname>-manager unless
serviceAccount.name says otherwise) or, with serviceAccount.create=false, one that exists. */}}
{{- define "perfexp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "perfexp.managerName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the name of an existing service account, since serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The manager image: image.digest wins over the tag; the tag defaults to appVersion. */}}
{{- define "perfexp.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* image.pullPolicy, or by default IfNotPresent for a digest or a version tag (v1.2.3,
1.2.3-rc.1) and Always for any other tag (dev, latest, main), which may move. */}}
{{- define "perfexp.imagePullPolicy" -}}
{{- if .Values.image.pullPolicy -}}
{{ .Values.image.pullPolicy }}
{{- else if .Values.image.digest -}}
IfNotPresent
{{- else if regexMatch "^v?[0-9]+\\.[0-9]+\\.[0-9]+([-+][0-9A-Za-z.+-]+)?$" (toString (.Values.image.tag | default .Chart.AppVersion)) -}}
IfNotPresent
{{- else -}}
Always
{{- end -}}
{{- end -}}

{{/* A YAML file of files/ (one or more documents) with every object renamed through
the "rename" dict (old name -> new name; also applied to spec.policyName and roleRef.name)
and the release's labels added. The files stay byte-equal to config/'s. */}}
{{- define "perfexp.renamedFile" -}}
{{- $root := .root -}}
{{- range $doc := regexSplit "(?m)^---\\s*$" ($root.Files.Get .file) -1 }}
{{- $obj := fromYaml $doc }}
{{- if $obj.kind }}
{{- $_ := set $obj.metadata "name" (get $.rename $obj.metadata.name | default $obj.metadata.name) }}
{{- $_ := set $obj.metadata "labels" (merge (dict) ($obj.metadata.labels | default dict) (include "perfexp.labels" $root | fromYaml)) }}
{{- if and $obj.spec $obj.spec.policyName }}
{{- $_ := set $obj.spec "policyName" (get $.rename $obj.spec.policyName | default $obj.spec.policyName) }}
{{- end }}
---
{{ toYaml $obj }}
{{- end }}
{{- end }}
{{- end -}}

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

{{/* Whether the metrics Service exists. */}}
{{- define "perfexp.metricsServiceEnabled" -}}
{{- if and .Values.metrics.service.enabled (ne (toString .Values.metrics.port) "0") -}}
true
{{- end -}}
{{- end -}}

{{/* The labels of the chart's test pod (helm test). */}}
{{- define "perfexp.testSelectorLabels" -}}
app.kubernetes.io/name: perfexp
app.kubernetes.io/component: chart-test
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Whether this is a namespaced install (scope: namespaced), checked against watchNamespaces. */}}
{{- define "perfexp.namespaced" -}}
{{- if eq .Values.scope "namespaced" -}}
{{- if not .Values.watchNamespaces -}}
{{- fail "scope: namespaced needs watchNamespaces, the namespaces the operator works in" -}}
{{- end -}}
true
{{- else if .Values.watchNamespaces -}}
{{- fail "watchNamespaces is only for scope: namespaced; set scope: namespaced (or empty watchNamespaces)" -}}
{{- end -}}
{{- end -}}

{{/* The namespace of the operator's Leases: leaseNamespace or the release's. */}}
{{- define "perfexp.leaseNamespace" -}}
{{- .Values.leaseNamespace | default .Release.Namespace -}}
{{- end -}}

{{/* Whether the metrics endpoint is served over HTTPS with authentication. */}}
{{- define "perfexp.metricsSecure" -}}
{{- if and .Values.metrics.secure (ne (toString .Values.metrics.port) "0") -}}
true
{{- end -}}
{{- end -}}
