package controller

import (
	"reflect"
	"sort"
	"testing"

	"github.com/capstan-cd/capstan/internal/repo/manifest"
)

func TestExternalURLs(t *testing.T) {
	objs, err := manifest.Parse("ingress.yaml", []byte(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web
  annotations: {link.argocd.argoproj.io/external-link: "https://dashboards.example.com/web", link.argocd.argoproj.io/note: "not a url"}
spec:
  tls: [{hosts: [secure.example.com]}]
  rules:
  - host: secure.example.com
    http: {paths: [{path: /shop, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}
  - host: plain.example.com
  - host: "*.wild.example.com"
  - http: {paths: [{path: /api, pathType: Prefix, backend: {service: {name: api, port: {number: 80}}}}]}
status:
  loadBalancer: {ingress: [{ip: 10.0.0.7}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := externalURLs(objs[0])
	sort.Strings(got)
	want := []string{"http://10.0.0.7/api", "http://plain.example.com/", "https://dashboards.example.com/web", "https://secure.example.com/shop"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("externalURLs = %v, want %v", got, want)
	}
	if got := externalURLs(objs[1]); len(got) != 0 {
		t.Errorf("a Service without links has URLs %v", got)
	}
}
