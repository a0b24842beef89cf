package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/capstan-cd/capstan/internal/argoapi"
	"github.com/capstan-cd/capstan/internal/repo/manifest"
	"github.com/capstan-cd/capstan/internal/safetext"
)

// generate runs the plugin's init and generate commands in the source's
// directory and answers with the objects generate printed, one JSON
// document each.
func (s *sidecar) generate(ctx context.Context, req *received) (protoreflect.Message, error) {
	spec := s.opts.Config.Spec
	if len(spec.Init.Command) > 0 {
		if _, err := s.run(ctx, spec.Init, req.appPath, req.env); err != nil {
			return nil, err
		}
	}
	out, err := s.run(ctx, spec.Generate, req.appPath, req.env)
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Parse("the generate command's output", []byte(out))
	if err != nil {
		return nil, err
	}
	res := dynamicpb.NewMessage(s.methods["GenerateManifest"].Output())
	list := res.Mutable(res.Descriptor().Fields().ByName("manifests")).List()
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		if err != nil {
			return nil, err
		}
		list.Append(protoreflect.ValueOfString(string(data)))
	}
	return res, nil
}

// match applies the plugin's discovery rule to the source: a file name
// glob in its directory, a glob of paths under it, or a command that
// claims it by printing anything.
func (s *sidecar) match(ctx context.Context, req *received) (protoreflect.Message, error) {
	d := s.opts.Config.Spec.Discover
	supported, err := false, error(nil)
	switch {
	case d.FileName != "":
		var found []string
		found, err = filepath.Glob(filepath.Join(req.appPath, d.FileName))
		supported = len(found) > 0
	case d.Find.Glob != "":
		supported, err = globMatches(req.appPath, d.Find.Glob)
	case len(d.Find.Command.Command) > 0:
		var out string
		out, err = s.run(ctx, d.Find.Command, req.appPath, req.env)
		supported = out != ""
	}
	if err != nil {
		return nil, fmt.Errorf("match repository error: %w", err)
	}
	res := dynamicpb.NewMessage(s.methods["MatchRepository"].Output())
	set(res, "isSupported", protoreflect.ValueOfBool(supported))
	set(res, "isDiscoveryEnabled", protoreflect.ValueOfBool(d.defined()))
	return res, nil
}

// globMatches reports whether any path under dir matches pattern, relative
// to dir; ** crosses directories, * does not.
func globMatches(dir, pattern string) (bool, error) {
	g, err := glob.Compile(strings.TrimPrefix(filepath.ToSlash(filepath.Clean(pattern)), "./"), '/')
	if err != nil {
		return false, fmt.Errorf("glob %q: %w", pattern, err)
	}
	found := false
	err = filepath.WalkDir(dir, func(path string, _ os.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel != "." && g.Match(filepath.ToSlash(rel)) {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found, err
}

// announce answers with the plugin's parameter announcements: those its
// dynamic command prints (a JSON list) first, then the static ones.
func (s *sidecar) announce(ctx context.Context, req *received) (protoreflect.Message, error) {
	params := s.opts.Config.Spec.Parameters
	var all []json.RawMessage
	if len(params.Dynamic.Command) > 0 {
		out, err := s.run(ctx, params.Dynamic, req.appPath, req.env)
		if err != nil {
			return nil, fmt.Errorf("error executing dynamic parameter output command: %w", err)
		}
		if err := json.Unmarshal([]byte(out), &all); err != nil {
			return nil, fmt.Errorf("error unmarshaling dynamic parameter output into ParametersAnnouncementResponse: %w", err)
		}
	}
	for _, p := range params.Static {
		data, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		all = append(all, data)
	}
	res := dynamicpb.NewMessage(s.methods["GetParametersAnnouncement"].Output())
	field := res.Descriptor().Fields().ByName("parameterAnnouncements")
	list := res.Mutable(field).List()
	for _, data := range all {
		p := dynamicpb.NewMessage(field.Message())
		if err := argoapi.UnmarshalJSON(data, p); err != nil {
			return nil, fmt.Errorf("parameter announcement %s: %w", safetext.Truncate(string(data), 64), err)
		}
		list.Append(protoreflect.ValueOfMessage(p))
	}
	return res, nil
}
