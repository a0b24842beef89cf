{{- define "loops.port" -}}
- name: {{ .port.name }}
  port: {{ .port.port }}
  targetPort: {{ .port.port }}
  {{- if .root.Values.appProtocol }}
  appProtocol: {{ .root.Values.appProtocol }}
  {{- end }}
{{- end -}}
