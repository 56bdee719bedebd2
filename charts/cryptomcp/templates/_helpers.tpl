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

{{/* The image, pinned by digest when image.digest is set (the tag is then ignored). */}}
{{- define "cryptomcp.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
Terminating without dropping requests: Kubernetes removes a terminating pod's endpoints as it
sends SIGTERM, and proxies learn of it seconds later. preStop waits first (a `node -e` sleep:
the image needs no shell), then `serve` keeps accepting for DRAIN_DELAY_MS (not ready, closing
each connection after its answer), then drains in-flight requests (SHUTDOWN_TIMEOUT_MS, 10 s).
The operator gives its MCPServer pods the same (operator/builders/mcpserver.ts).
*/}}
{{- define "cryptomcp.preStop" -}}
preStop:
  exec:
    command: [node, -e, "setTimeout(() => {}, 5000)"]
{{- end -}}

{{/*
The OAuth cookie key's Secret: web.oauth.cookieSecretRef, else the one the chart creates
(oauth-secret.yaml). Never derived from DATABASE_URL.
*/}}
{{- define "cryptomcp.cookieSecretRef" -}}
{{- $ref := .Values.web.oauth.cookieSecretRef -}}
{{- if $ref.name -}}
{{- toJson (dict "name" $ref.name "key" ($ref.key | default "key")) -}}
{{- else -}}
{{- toJson (dict "name" (printf "%s-oauth" (include "cryptomcp.fullname" .)) "key" "key") -}}
{{- end -}}
{{- end -}}

{{/*
A checksum of the Secrets a `serve` pod reads (database URL, OAuth cookie key, x402 settlement
key): on `helm upgrade` after a Secret was rotated, the pod template changes and the pods roll,
as the operator rolls its MCPServer pods (whose config-hash covers their Secrets). lookup reads
nothing under `helm template`, so the names and keys alone are hashed there.
*/}}
{{- define "cryptomcp.secretsChecksum" -}}
{{- /* The chart-made cookie key never changes (and does not exist yet at the first install): left out. */ -}}
{{- $refs := list (dict "name" .Values.database.existingSecret "key" .Values.database.key) -}}
{{- if .Values.web.oauth.cookieSecretRef.name }}{{ $refs = append $refs (include "cryptomcp.cookieSecretRef" . | fromJson) }}{{ end -}}
{{- with .Values.web.payments.x402.settlementKeySecretRef }}{{ if .name }}{{ $refs = append $refs (dict "name" .name "key" (.key | default "key")) }}{{ end }}{{ end -}}
{{- $seen := list -}}
{{- range $refs -}}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace .name -}}
{{- $value := "" -}}
{{- if $secret }}{{ $value = index ($secret.data | default dict) .key | default "" }}{{ end -}}
{{- $seen = append $seen (printf "%s/%s=%s" .name .key $value) -}}
{{- end -}}
{{- $seen | toJson | sha256sum -}}
{{- end -}}

{{/*
Pods at their most during a rolling update of a Deployment with maxReplicas pods and maxSurge
25% (rounded up, as Kubernetes does): maxReplicas + ceil(maxReplicas / 4).
*/}}
{{- define "cryptomcp.surged" -}}
{{- $n := int . -}}
{{- add $n (div (add $n 3) 4) -}}
{{- end -}}

{{/* The most pods a component's HPA (or fixed count) may run. */}}
{{- define "cryptomcp.maxPods" -}}
{{- if .autoscaling.enabled }}{{ .autoscaling.maxReplicas }}{{ else }}{{ .replicas }}{{ end -}}
{{- end -}}

{{/*
The database connection budget (docs/kubernetes.md): every pool at its component's maximum
scale during a rolling update. Returns JSON {total, parts}.
  servers:  sum over servers of (maxReplicas + ceil(maxReplicas/4)) x servers.databasePoolMax
  gateway:  (maxReplicas + ceil(maxReplicas/4)) x gateway.databasePoolMax
  web:      (maxReplicas + ceil(maxReplicas/4)) x web.databasePoolMax
  operator: replicas x 4 (its fixed pool; the chart rolls it without a surge pod)
The migrate hook Job (one connection) finishes before any rollout starts, inside the surge.
*/}}
{{- define "cryptomcp.connectionBudget" -}}
{{- $parts := dict -}}
{{- $servers := 0 -}}
{{- if .Values.servers.enabled -}}
{{- range $server := .Values.servers.names -}}
{{- $spec := mergeOverwrite (deepCopy $.Values.servers.defaults) (deepCopy (get $.Values.servers.overrides $server | default dict)) -}}
{{- $pods := 1 -}}
{{- if hasKey $spec "replicas" -}}
{{- $pods = int $spec.replicas -}}
{{- else if ne (toString (dig "autoscaling" "enabled" true $spec)) "false" -}}
{{- $pods = int (dig "autoscaling" "maxReplicas" 10 $spec) -}}
{{- end -}}
{{- $servers = add $servers (mul (include "cryptomcp.surged" $pods) $.Values.servers.databasePoolMax) -}}
{{- end -}}
{{- end -}}
{{- $_ := set $parts "servers" $servers -}}
{{- $_ := set $parts "gateway" (ternary (mul (include "cryptomcp.surged" (include "cryptomcp.maxPods" .Values.gateway)) .Values.gateway.databasePoolMax) 0 .Values.gateway.enabled) -}}
{{- $_ := set $parts "web" (ternary (mul (include "cryptomcp.surged" (include "cryptomcp.maxPods" .Values.web)) .Values.web.databasePoolMax) 0 .Values.web.enabled) -}}
{{- $_ := set $parts "operator" (ternary (mul .Values.operator.replicas 4) 0 .Values.operator.enabled) -}}
{{- toJson (dict "total" (add $parts.servers $parts.gateway $parts.web $parts.operator) "parts" $parts) -}}
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
