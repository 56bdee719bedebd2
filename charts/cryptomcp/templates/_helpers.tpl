{{/* Names and labels shared by every template. */}}
{{- define "cryptomcp.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cryptomcp.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Chart labels plus commonLabels; commonLabels never override the chart's own. */}}
{{- define "cryptomcp.labels" -}}
{{- $own := dict "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_") "app.kubernetes.io/version" .Chart.AppVersion "app.kubernetes.io/managed-by" .Release.Service "app.kubernetes.io/part-of" "cryptomcp" "app.kubernetes.io/name" .Chart.Name "app.kubernetes.io/instance" .Release.Name -}}
{{- toYaml (merge $own .Values.commonLabels) -}}
{{- end -}}

{{- define "cryptomcp.annotations" -}}
{{- with .Values.commonAnnotations -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end -}}
{{- end -}}

{{- define "cryptomcp.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "cryptomcp.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "cryptomcp.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "cryptomcp.databaseEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret }}
      key: {{ .Values.database.key }}
{{- end -}}

{{/*
Spread a component's pods over nodes and zones (preferred: a single-zone or one-node cluster still
schedules them). Call with (dict "root" $ "component" "web").
*/}}
{{- define "cryptomcp.topologySpread" -}}
{{- range $key := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
- maxSkew: 1
  topologyKey: {{ $key }}
  whenUnsatisfiable: ScheduleAnyway
  labelSelector:
    matchLabels:
      {{- include "cryptomcp.selectorLabels" $.root | nindent 6 }}
      app.kubernetes.io/component: {{ $.component }}
{{- end }}
{{- end }}

{{/*
The web pods' PUBLIC_BASE_URL: web.publicBaseUrl, else the web ingress's host. The dashboard's
sign-in domain and the OAuth issuer come from it (never from a request's Host), so the chart
refuses to render the dashboard and OAuth without one.
*/}}
{{- define "cryptomcp.publicBaseUrl" -}}
{{- if .Values.web.publicBaseUrl -}}
{{- .Values.web.publicBaseUrl | trimSuffix "/" -}}
{{- else if and .Values.web.ingress.enabled .Values.web.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.web.ingress.tlsSecretName "")) .Values.web.ingress.host -}}
{{- else -}}
{{- fail "web is enabled (the dashboard and OAuth): set web.ingress.enabled=true with web.ingress.host, or web.publicBaseUrl, the URL clients reach the service at. The sign-in domain and the OAuth issuer come from it, never from a request's Host header." -}}
{{- end -}}
{{- end -}}
