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
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
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

{{/* An image reference with global.imageRegistry in front, unless the reference already
names a registry (its first part has a dot or a port, or is localhost): a mirror then serves
perfexp/manager and grafana/k6 under the same paths, and an image a user pinned to a registry
stays where it is. Called with (dict "root" $ "image" "<reference>"). */}}
{{- define "perfexp.registryImage" -}}
{{- $registry := "" -}}
{{- with .root.Values.global }}{{ $registry = .imageRegistry | default "" }}{{ end -}}
{{- $first := first (splitList "/" .image) -}}
{{- if and $registry (contains "/" .image) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{ .image }}
{{- else if $registry -}}
{{ trimSuffix "/" $registry }}/{{ .image }}
{{- else -}}
{{ .image }}
{{- end -}}
{{- end -}}

{{/* The manager image: image.digest wins over the tag; the tag defaults to appVersion. */}}
{{- define "perfexp.image" -}}
{{- $ref := "" -}}
{{- if .Values.image.digest -}}
{{- $ref = printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- $ref = printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) -}}
{{- end -}}
{{- include "perfexp.registryImage" (dict "root" . "image" $ref) -}}
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

{{/* Whether to render the ServiceMonitor: "auto" follows the cluster's API versions, and a
PodMonitor takes its place when metrics.podMonitor.enabled. */}}
{{- define "perfexp.serviceMonitorEnabled" -}}
{{- $v := toString .Values.metrics.serviceMonitor.enabled -}}
{{- if and .Values.metrics.podMonitor.enabled (eq $v "true") -}}
{{- fail "metrics.podMonitor.enabled and metrics.serviceMonitor.enabled=true: choose one scrape (the PodMonitor replaces the ServiceMonitor; leave serviceMonitor.enabled at auto or false)" -}}
{{- end -}}
{{- if and (ne (toString .Values.metrics.port) "0") (not .Values.metrics.podMonitor.enabled) (or (eq $v "true") (and (eq $v "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1"))) -}}
true
{{- end -}}
{{- end -}}

{{/* Which part of the release to render (installPart; docs/install.md#split-install). The
cluster part is what needs a cluster admin: RBAC of every scope and the admission policies.
The namespace part is what the operator's namespace admin may create: the manager and its
Service, monitors, alerts, disruption budget and network policy. */}}
{{- define "perfexp.clusterPart" -}}
{{- if ne .Values.installPart "namespace" -}}
{{- if and (eq .Values.installPart "cluster") (not .Values.fullnameOverride) -}}
{{- fail "installPart: cluster needs fullnameOverride, the same in both parts, so the bindings name the manager the namespace part creates" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}
{{- define "perfexp.namespacePart" -}}
{{- if ne .Values.installPart "cluster" -}}
{{- if and (eq .Values.installPart "namespace") (not .Values.fullnameOverride) -}}
{{- fail "installPart: namespace needs fullnameOverride, the same in both parts, so the manager runs as the service account the cluster part bound" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{/* Whether the chart writes the manager's RBAC (rbac.create, in the cluster part). */}}
{{- define "perfexp.rbacEnabled" -}}
{{- if and .Values.rbac.create (include "perfexp.clusterPart" .) -}}
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
