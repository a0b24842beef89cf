package argoapi

import (
	"encoding/json"
	"regexp"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Swagger describes the REST API in Swagger 2.0, made from the schema:
// each method's bindings as operations (path, query and body parameters)
// and its messages as definitions, as Argo CD's server serves it at
// /swagger.json.
func (s *Schema) Swagger() ([]byte, error) {
	methods, err := s.Methods()
	if err != nil {
		return nil, err
	}
	g := &swaggerGen{defs: map[string]any{}}
	paths := map[string]map[string]any{}
	for _, md := range methods {
		for _, b := range BindingsOf(md) {
			path, op := g.operation(md, b)
			if paths[path] == nil {
				paths[path] = map[string]any{}
			}
			paths[path][strings.ToLower(b.Method)] = op
		}
	}
	g.defs["runtimeError"] = map[string]any{"type": "object", "properties": map[string]any{
		"error": map[string]any{"type": "string"}, "code": map[string]any{"type": "integer", "format": "int32"},
		"message": map[string]any{"type": "string"},
	}}
	return json.MarshalIndent(map[string]any{
		"swagger":     "2.0",
		"info":        map[string]any{"title": "Consolidate Services", "description": "Description of all APIs", "version": "version not set"},
		"consumes":    []string{"application/json"},
		"produces":    []string{"application/json"},
		"paths":       paths,
		"definitions": g.defs,
	}, "", "  ")
}

// pathParam matches a path template's parameters: {name} or {name=**}.
var pathParam = regexp.MustCompile(`\{([^}=]+)(=[^}]*)?\}`)

type swaggerGen struct {
	defs map[string]any
}

// operation describes one binding of a method.
func (g *swaggerGen) operation(md protoreflect.MethodDescriptor, b Binding) (string, map[string]any) {
	service := string(md.Parent().Name())
	var params []any
	inPath := map[string]bool{}
	path := pathParam.ReplaceAllStringFunc(b.Path, func(p string) string {
		name := pathParam.FindStringSubmatch(p)[1]
		inPath[name] = true
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "type": "string"})
		return "{" + name + "}"
	})
	input := md.Input()
	switch b.Body {
	case "":
		params = append(params, g.queryParams(input, "", inPath)...)
	case "*":
		params = append(params, map[string]any{"name": "body", "in": "body", "required": true, "schema": g.ref(input)})
	default:
		if fd := input.Fields().ByName(protoreflect.Name(b.Body)); fd != nil {
			params = append(params, map[string]any{"name": "body", "in": "body", "required": true, "schema": g.field(fd)})
		}
		skip := map[string]bool{b.Body: true}
		for name := range inPath {
			skip[name] = true
		}
		params = append(params, g.queryParams(input, "", skip)...)
	}
	response := g.ref(md.Output())
	if md.IsStreamingServer() {
		response = map[string]any{"type": "object", "title": "Stream result of " + g.name(md.Output()),
			"properties": map[string]any{"result": g.ref(md.Output()), "error": map[string]any{"$ref": "#/definitions/runtimeError"}}}
	}
	return path, map[string]any{
		"operationId": service + "_" + string(md.Name()),
		"tags":        []string{service},
		"parameters":  params,
		"responses": map[string]any{
			"200":     map[string]any{"description": "A successful response.", "schema": response},
			"default": map[string]any{"description": "An unexpected error response.", "schema": map[string]any{"$ref": "#/definitions/runtimeError"}},
		},
	}
}

// queryParams lists a message's scalar fields (and those of its message
// fields, dotted) as query parameters, leaving out those in skip.
func (g *swaggerGen) queryParams(md protoreflect.MessageDescriptor, prefix string, skip map[string]bool) []any {
	var out []any
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		name := prefix + fd.JSONName()
		if skip[name] || skip[prefix+string(fd.Name())] {
			continue
		}
		if fd.Kind() == protoreflect.MessageKind && !fd.IsMap() {
			if _, special := toSpecial[fd.Message().FullName()]; !special && prefix == "" && !fd.IsList() {
				out = append(out, g.queryParams(fd.Message(), name+".", skip)...)
			}
			continue
		}
		if fd.IsMap() {
			continue
		}
		p := map[string]any{"name": name, "in": "query", "required": false}
		for k, v := range scalarSchema(fd) {
			p[k] = v
		}
		if fd.IsList() {
			p = map[string]any{"name": name, "in": "query", "required": false, "type": "array", "items": scalarSchema(fd), "collectionFormat": "multi"}
		}
		out = append(out, p)
	}
	return out
}

// name is a message's definition name: its package's last part and its
// name, as grpc-gateway's generator names them (v1alpha1Application).
func (g *swaggerGen) name(md protoreflect.MessageDescriptor) string {
	pkg := string(md.ParentFile().Package())
	if i := strings.LastIndex(pkg, "."); i >= 0 {
		pkg = pkg[i+1:]
	}
	rel := strings.TrimPrefix(string(md.FullName()), string(md.ParentFile().Package())+".")
	return pkg + strings.ReplaceAll(rel, ".", "")
}

// ref refers to a message's definition, writing it the first time.
func (g *swaggerGen) ref(md protoreflect.MessageDescriptor) map[string]any {
	if _, special := toSpecial[md.FullName()]; special {
		return specialSchema(md.FullName())
	}
	name := g.name(md)
	if _, done := g.defs[name]; !done {
		g.defs[name] = nil // taken, for recursive messages
		props := map[string]any{}
		g.properties(md, props)
		g.defs[name] = map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{"$ref": "#/definitions/" + name}
}

// properties adds a message's fields to props, inline ones flattened.
func (g *swaggerGen) properties(md protoreflect.MessageDescriptor, props map[string]any) {
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if inline[fd.FullName()] && fd.Kind() == protoreflect.MessageKind {
			g.properties(fd.Message(), props)
			continue
		}
		props[fd.JSONName()] = g.field(fd)
	}
}

// field is one field's schema.
func (g *swaggerGen) field(fd protoreflect.FieldDescriptor) map[string]any {
	one := func(fd protoreflect.FieldDescriptor) map[string]any {
		if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
			return g.ref(fd.Message())
		}
		return scalarSchema(fd)
	}
	switch {
	case fd.IsMap():
		return map[string]any{"type": "object", "additionalProperties": one(fd.MapValue())}
	case fd.IsList():
		return map[string]any{"type": "array", "items": one(fd)}
	}
	return one(fd)
}

// scalarSchema is the schema of a scalar field, as grpc-gateway writes
// them (64-bit integers as strings of format int64).
func scalarSchema(fd protoreflect.FieldDescriptor) map[string]any {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return map[string]any{"type": "boolean"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return map[string]any{"type": "integer", "format": "int32"}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return map[string]any{"type": "integer", "format": "int64"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return map[string]any{"type": "string", "format": "int64"}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return map[string]any{"type": "string", "format": "uint64"}
	case protoreflect.FloatKind:
		return map[string]any{"type": "number", "format": "float"}
	case protoreflect.DoubleKind:
		return map[string]any{"type": "number", "format": "double"}
	case protoreflect.BytesKind:
		return map[string]any{"type": "string", "format": "byte"}
	}
	return map[string]any{"type": "string"}
}

// specialSchema is the schema of the Kubernetes types whose JSON is a
// scalar or a whole document.
func specialSchema(name protoreflect.FullName) map[string]any {
	switch name {
	case timeType, microTimeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case rawType, extJSONType, fieldsV1Type:
		return map[string]any{"type": "object"}
	}
	return map[string]any{"type": "string"}
}
