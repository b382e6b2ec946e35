{{/* The release's name for every object (at most 63 characters). */}}
{{- define "tributary.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The headless service: each pod is <pod>.<this>.<namespace>.svc. */}}
{{- define "tributary.headless" -}}
{{- printf "%s-workers" (include "tributary.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "tributary.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tributary.labels" -}}
{{ include "tributary.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The worker's keys: the chart's defaults under the user's worker map, checked. */}}
{{- define "tributary.worker" -}}
{{- $v := .Values -}}
{{- if not (has $v.mode (list "distributed" "standalone")) -}}
{{- fail (printf "mode: %q is neither distributed nor standalone" $v.mode) -}}
{{- end -}}
{{- if and (eq $v.mode "standalone") (ne (int $v.replicas) 1) -}}
{{- fail (printf "replicas: %v with mode standalone; a standalone worker's connectors live in its own store, so it runs alone (replicas: 1), or use mode distributed" $v.replicas) -}}
{{- end -}}
{{- if not (index $v.worker "bootstrap.servers") -}}
{{- fail "worker: bootstrap.servers is not set; the worker would refuse to start" -}}
{{- end -}}
{{- $fullname := include "tributary.fullname" . -}}
{{- $keys := dict "listeners" (printf "http://0.0.0.0:%d" (int $v.port)) "offset.storage.file.filename" "/var/lib/tributary/tributary.db" -}}
{{- if eq $v.mode "distributed" -}}
{{- $_ := set $keys "group.id" $fullname -}}
{{- $_ := set $keys "config.storage.topic" (printf "%s-configs" $fullname) -}}
{{- $_ := set $keys "offset.storage.topic" (printf "%s-offsets" $fullname) -}}
{{- $_ := set $keys "status.storage.topic" (printf "%s-status" $fullname) -}}
{{- else if index $v.worker "group.id" -}}
{{- fail "worker: group.id is set with mode standalone; set mode: distributed to run a cluster" -}}
{{- end -}}
{{- if $v.connectors -}}
{{- $_ := set $keys "connectors.dir" "/etc/tributary/connectors" -}}
{{- end -}}
{{- range $key, $value := $v.worker -}}
{{- $_ := set $keys $key $value -}}
{{- end -}}
{{- toJson $keys -}}
{{- end -}}

{{/* https when the first listener is, for the probes. */}}
{{- define "tributary.scheme" -}}
{{- $keys := include "tributary.worker" . | fromJson -}}
{{- if hasPrefix "https://" (index $keys "listeners") -}}HTTPS{{- else -}}HTTP{{- end -}}
{{- end -}}
