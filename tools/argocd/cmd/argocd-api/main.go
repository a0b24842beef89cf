// Command argocd-api writes the protobuf schema of Argo CD's API (its
// services, their messages and every message they reach, with field
// numbers and HTTP bindings) as a FileDescriptorSet, read from the Argo CD
// module this tools module pins. Capstan serves its gRPC API from that
// schema, so what goes over the wire is Argo CD's.
//
// With -source, the schema files are read instead from the generated Go
// files of a newer Argo CD module's source (the module Capstan's go.mod
// requires, which cannot be built from the module proxy): each one holds
// its schema file, gzipped, as a byte literal. Files it does not hold
// (Kubernetes', whose newer generated code no longer carries them; the
// Google API annotations) still come from the pinned module's.
//
//	go run ./cmd/argocd-api [-source DIR] ../../internal/argoapi/argocd.binpb
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	gogoproto "github.com/gogo/protobuf/proto"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	// Each package registers its service's schema; cmpserver's is the
	// protocol of config management plugin sidecars, which the repo server
	// speaks as a client.
	_ "github.com/argoproj/argo-cd/v3/cmpserver/apiclient"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/account"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/application"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/applicationset"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/certificate"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/cluster"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/gpgkey"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/notification"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/project"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/repocreds"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/repository"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/session"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/settings"
	_ "github.com/argoproj/argo-cd/v3/pkg/apiclient/version"
	_ "github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	// askpass is how a plugin's git asks the repo server for the
	// repository's credentials.
	_ "github.com/argoproj/argo-cd/v3/util/askpass"
)

// services are the schema files of the API's services.
var services = []string{
	"cmpserver/plugin/plugin.proto",
	"server/account/account.proto",
	"server/application/application.proto",
	"server/applicationset/applicationset.proto",
	"server/certificate/certificate.proto",
	"server/cluster/cluster.proto",
	"server/gpgkey/gpgkey.proto",
	"server/notification/notification.proto",
	"server/project/project.proto",
	"server/repocreds/repocreds.proto",
	"server/repository/repository.proto",
	"server/session/session.proto",
	"server/settings/settings.proto",
	"server/version/version.proto",
	"util/askpass/askpass.proto",
}

func main() {
	source := flag.String("source", "", "root of a newer Argo CD module whose generated Go files hold the schema files")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: argocd-api [-source DIR] OUTPUT")
		os.Exit(2)
	}
	if *source != "" {
		var err error
		if fromSource, err = scanSource(*source); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	files := map[string]*descriptorpb.FileDescriptorProto{}
	for _, name := range services {
		if _, err := collect(name, files); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, name := range order(files) {
		f := files[name]
		f.SourceCodeInfo = nil
		set.File = append(set.File, f)
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err == nil {
		err = os.WriteFile(flag.Arg(0), data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d files, %d bytes\n", len(set.File), len(data))
}

// collect reads a registered schema file and the files it imports, and
// returns the name it is kept under: files import some files by more
// than one name (gogo.proto), which must not make two copies.
func collect(name string, files map[string]*descriptorpb.FileDescriptorProto) (string, error) {
	f, err := registered(name)
	if err != nil {
		return "", err
	}
	canonical := f.GetName()
	if _, done := files[canonical]; done {
		return canonical, nil
	}
	files[canonical] = f
	for i, dep := range f.Dependency {
		if f.Dependency[i], err = collect(dep, files); err != nil {
			return "", err
		}
	}
	return canonical, nil
}

// registered returns a schema file from the registry of the gogo
// protobuf runtime Argo CD's generated code uses, else from the standard
// one (the Google API annotations).
func registered(name string) (*descriptorpb.FileDescriptorProto, error) {
	gz := fromSource[name]
	if gz == nil {
		gz = fromSource[strings.TrimPrefix(name, "github.com/argoproj/argo-cd/v3/")]
	}
	if gz == nil {
		gz = gogoproto.FileDescriptor(name)
	}
	if gz == nil {
		gz = gogoproto.FileDescriptor(path.Base(name)) // gogo.proto registers under its base name
	}
	if gz == nil {
		// Argo CD's files register relative to its module's root.
		gz = gogoproto.FileDescriptor(strings.TrimPrefix(name, "github.com/argoproj/argo-cd/v3/"))
	}
	if gz == nil {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(name)
		if err != nil {
			return nil, fmt.Errorf("%s is not registered: %w", name, err)
		}
		return protodesc.ToFileDescriptorProto(fd), nil
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(raw, f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// order lists the files so that each comes after the files it imports.
func order(files map[string]*descriptorpb.FileDescriptorProto) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	done := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		if done[n] {
			return
		}
		done[n] = true
		for _, d := range files[n].Dependency {
			visit(d)
		}
		out = append(out, n)
	}
	for _, n := range names {
		visit(n)
	}
	return out
}
