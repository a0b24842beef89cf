{{/*
capstan.image is the image of Capstan's components.
*/}}
{{- define "capstan.image" -}}
{{ .Values.global.image.repository }}:{{ .Values.global.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/*
capstan.stringMap renders a map's values as strings, as ConfigMap data
wants them (a values file may say `server.insecure: true`).
*/}}
{{- define "capstan.stringMap" -}}
{{- $out := dict }}
{{- range $k, $v := . }}
{{- $_ := set $out $k (toString $v) }}
{{- end }}
{{- toYaml $out }}
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
