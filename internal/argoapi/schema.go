// Package argoapi is Argo CD's API schema: its gRPC services, their
// messages with Argo CD's field numbers, and each method's REST binding,
// as argocd.binpb holds them (written by `make argocd-api` from the
// generated code of the Argo CD module Capstan's go.mod requires, the
// newest release). It converts messages to and from
// the JSON of the REST API, with Kubernetes' JSON forms of its types.
//
//	s, err := argoapi.Load()
//	for _, md := range s.Methods() { b, ok := argoapi.BindingOf(md) … }
//	msg := dynamicpb.NewMessage(md.Input())
//	err = argoapi.UnmarshalJSON(data, msg)
package argoapi

import (
	_ "embed"
	"fmt"
	"sort"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

//go:embed argocd.binpb
var schema []byte

// Services are the full names of Argo CD's API services.
var Services = []protoreflect.FullName{
	"account.AccountService", "application.ApplicationService", "applicationset.ApplicationSetService",
	"certificate.CertificateService", "cluster.ClusterService", "cluster.SettingsService", "gpgkey.GPGKeyService",
	"notification.NotificationService", "project.ProjectService", "repocreds.RepoCredsService",
	"repository.RepositoryService", "session.SessionService", "version.VersionService",
}

// Schema is Argo CD's API schema.
type Schema struct {
	files *protoregistry.Files
}

// Load reads the embedded schema.
func Load() (*Schema, error) {
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(schema, set); err != nil {
		return nil, fmt.Errorf("reading Argo CD's API schema: %w", err)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, fmt.Errorf("reading Argo CD's API schema: %w", err)
	}
	return &Schema{files: files}, nil
}

// Service returns a service by full name.
func (s *Schema) Service(name protoreflect.FullName) (protoreflect.ServiceDescriptor, error) {
	d, err := s.files.FindDescriptorByName(name)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", name, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a service", name)
	}
	return sd, nil
}

// Methods returns every method of the services, ordered by full name.
func (s *Schema) Methods() ([]protoreflect.MethodDescriptor, error) {
	var out []protoreflect.MethodDescriptor
	for _, name := range Services {
		sd, err := s.Service(name)
		if err != nil {
			return nil, err
		}
		for i := 0; i < sd.Methods().Len(); i++ {
			out = append(out, sd.Methods().Get(i))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].FullName() < out[j].FullName() })
	return out, nil
}

// Binding is the REST call a method is served by.
type Binding struct {
	// Method and Path are the HTTP method and path template
	// ("/api/v1/applications/{name}").
	Method, Path string
	// Body names the request field sent as the body: "*" for the whole
	// request but the path's fields, "" for none.
	Body string
	// ResponseBody names the response field the answer fills; "" for the
	// whole response.
	ResponseBody string
}

// BindingOf returns a method's REST binding (its google.api.http option).
func BindingOf(md protoreflect.MethodDescriptor) (Binding, bool) {
	all := BindingsOf(md)
	if len(all) == 0 {
		return Binding{}, false
	}
	return all[0], true
}

// BindingsOf returns a method's REST bindings: the google.api.http
// option's, then its additional ones (PodLogs is served with and without
// a pod's name in the path).
func BindingsOf(md protoreflect.MethodDescriptor) []Binding {
	opts, ok := md.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil || !proto.HasExtension(opts, annotations.E_Http) {
		return nil
	}
	rule, _ := proto.GetExtension(opts, annotations.E_Http).(*annotations.HttpRule)
	if rule == nil {
		return nil
	}
	var out []Binding
	for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
		if b, ok := binding(r); ok {
			out = append(out, b)
		}
	}
	return out
}

func binding(rule *annotations.HttpRule) (Binding, bool) {
	b := Binding{Body: rule.GetBody(), ResponseBody: rule.GetResponseBody()}
	switch p := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		b.Method, b.Path = "GET", p.Get
	case *annotations.HttpRule_Post:
		b.Method, b.Path = "POST", p.Post
	case *annotations.HttpRule_Put:
		b.Method, b.Path = "PUT", p.Put
	case *annotations.HttpRule_Delete:
		b.Method, b.Path = "DELETE", p.Delete
	case *annotations.HttpRule_Patch:
		b.Method, b.Path = "PATCH", p.Patch
	default:
		return Binding{}, false
	}
	return b, true
}
