{{/* Names shared by every template. */}}
{{- define "portcullis.fullname" -}}
{{- if contains "portcullis" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-portcullis" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "portcullis.selectorLabels" -}}
app.kubernetes.io/name: portcullis
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "portcullis.labels" -}}
{{ include "portcullis.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* config/gateway.yaml: the repository's (or config.files') with config.gateway and shutdown.graceMs merged in. */}}
{{- define "portcullis.gatewayYaml" -}}
{{- $text := index .Values.config.files "config/gateway.yaml" | default (.Files.Get "files/config/gateway.yaml") -}}
{{- $doc := mergeOverwrite (fromYaml $text) (deepCopy .Values.config.gateway) -}}
{{- $_ := set $doc "shutdown" (mergeOverwrite (default dict $doc.shutdown) (dict "graceMs" (int .Values.shutdown.graceMs))) -}}
{{- toYaml $doc -}}
{{- end -}}

{{/*
The configuration root's documents, folder by folder: {config: {gateway.yaml: …}, catalog: {…}, rules: {…}}.
Each folder becomes its own ConfigMap, mounted at /etc/portcullis/<folder> (a ConfigMap's keys cannot hold
a slash, and flat items are what every runtime mounts alike).
*/}}
{{- define "portcullis.configFolders" -}}
{{- $folders := dict "config" dict "catalog" dict "rules" dict -}}
{{- range $path, $_ := .Files.Glob "files/{config,catalog,rules}/*.{yaml,json}" -}}
{{- $parts := splitList "/" (trimPrefix "files/" $path) -}}
{{- $_ := set (index $folders (index $parts 0)) (index $parts 1) ($.Files.Get $path) -}}
{{- end -}}
{{- range $path, $content := .Values.config.files -}}
{{- $parts := splitList "/" $path -}}
{{- if or (ne (len $parts) 2) (not (hasKey $folders (index $parts 0))) -}}
{{- fail (printf "config.files: %q is not config/, catalog/ or rules/ followed by a file name" $path) -}}
{{- end -}}
{{- $_ := set (index $folders (index $parts 0)) (index $parts 1) $content -}}
{{- end -}}
{{- $_ := set $folders.config "gateway.yaml" (include "portcullis.gatewayYaml" .) -}}
{{- toYaml $folders -}}
{{- end -}}

{{/* Seconds from SIGTERM to SIGKILL: the preStop wait, the gateway's own drain delay and grace, and a margin. */}}
{{- define "portcullis.terminationSeconds" -}}
{{- $doc := fromYaml (include "portcullis.gatewayYaml" .) -}}
{{- $ms := add (int .Values.shutdown.graceMs) (int (default 0 $doc.shutdown.drainDelayMs)) -}}
{{- add (int .Values.shutdown.drainDelaySeconds) (div (add $ms 999) 1000) 10 -}}
{{- end -}}
