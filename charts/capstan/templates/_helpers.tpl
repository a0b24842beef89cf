{{/*
capstan.image is the image of Capstan's components.
*/}}
{{- define "capstan.image" -}}
{{ .Values.global.image.repository }}:{{ .Values.global.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
capstan.setStrings sets each entry of a map of values into a dict as a
string, as ConfigMap data wants them (a values file may say
`server.insecure: true`), keeping multi-line values whole. Called with
(list dict values); it writes nothing.
*/}}
{{- define "capstan.setStrings" -}}
{{- $dst := index . 0 }}
{{- range $k, $v := index . 1 }}{{ $_ := set $dst $k (toString $v) }}{{ end }}
{{- end }}

{{/*
capstan.container applies a component's values to one container of its
pod: the image, and for the component's own container its resources,
extra arguments and environment. Called with (list $ container values).
*/}}
{{- define "capstan.container" -}}
{{- $root := index . 0 }}{{- $c := index . 1 }}{{- $values := index . 2 }}
{{- if hasPrefix "redis:" $c.image }}
{{- $_ := set $c "image" (printf "%s:%s" $root.Values.redis.image.repository $root.Values.redis.image.tag) }}
{{- with $root.Values.redis.image.imagePullPolicy }}{{ $_ := set $c "imagePullPolicy" . }}{{ end }}
{{- else }}
{{- $_ := set $c "image" (include "capstan.image" $root) }}
{{- $_ := set $c "imagePullPolicy" $root.Values.global.image.imagePullPolicy }}
{{- end }}
{{- with $values.resources }}{{ $_ := set $c "resources" . }}{{ end }}
{{- with $values.extraArgs }}{{ $_ := set $c "args" (concat ($c.args | default list) .) }}{{ end }}
{{- with $values.env }}{{ $_ := set $c "env" (concat ($c.env | default list) .) }}{{ end }}
{{- end }}

{{/*
capstan.notificationsData fills argocd-notifications-cm from the
notifications values, as the community chart does: notifiers
(service.*), templates (template.*) and triggers (trigger.*) as written,
subscriptions and context (with argocdUrl) as YAML. Called with
(list $ configMap).
*/}}
{{- define "capstan.notificationsData" -}}
{{- $root := index . 0 }}{{- $obj := index . 1 }}
{{- $n := $root.Values.notifications }}
{{- $data := dict }}
{{- range $part := list $n.notifiers $n.templates $n.triggers }}{{ include "capstan.setStrings" (list $data ($part | default dict)) }}{{ end }}
{{- with $n.subscriptions }}{{ $_ := set $data "subscriptions" (printf "%s\n" (toYaml .)) }}{{ end }}
{{- $context := deepCopy ($n.context | default dict) }}
{{- with $n.argocdUrl }}{{ $_ := set $context "argocdUrl" . }}{{ end }}
{{- if $context }}{{ $_ := set $data "context" (printf "%s\n" (toYaml $context)) }}{{ end }}
{{- $data = merge $data ($obj.data | default dict) }}
{{- if $data }}{{ $_ := set $obj "data" $data }}{{ end }}
{{- end }}
