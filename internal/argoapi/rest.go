package argoapi

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// templateSegment is a path template's parameter: {field}, {a.b} or
// {field=**} (the rest of the path).
var templateSegment = regexp.MustCompile(`^\{([\w.]+)(=\*\*)?\}$`)

// Match reports whether a REST call (method and escaped path) is this
// binding's, with the values of its path parameters by field path.
func (b Binding) Match(method, escapedPath string) (map[string]string, bool) {
	if method != b.Method {
		return nil, false
	}
	segs := strings.Split(strings.Trim(escapedPath, "/"), "/")
	pat := strings.Split(strings.Trim(b.Path, "/"), "/")
	params := map[string]string{}
	for i, p := range pat {
		if i >= len(segs) {
			return nil, false
		}
		sub := templateSegment.FindStringSubmatch(p)
		if sub == nil {
			if segs[i] != p {
				return nil, false
			}
			continue
		}
		last := i + 1
		if sub[2] != "" {
			last = len(segs)
		}
		vals := make([]string, 0, last-i)
		for _, seg := range segs[i:last] {
			v, err := url.PathUnescape(seg)
			if err != nil {
				return nil, false
			}
			vals = append(vals, v)
		}
		params[sub[1]] = strings.Join(vals, "/")
		if sub[2] != "" {
			return params, true
		}
	}
	return params, len(segs) == len(pat)
}

// FillRequest fills a method's request from its REST call, as the binding
// lays it out: the body (the whole request, or the field it names), the
// path's parameters and the query's (by field JSON name, dotted into
// message fields). A body sent to a binding that takes none is read as
// the whole request, as its query would carry it.
func FillRequest(m protoreflect.Message, b Binding, params map[string]string, query url.Values, body []byte) error {
	if len(body) > 0 {
		target := m
		if b.Body != "" && b.Body != "*" {
			fd := m.Descriptor().Fields().ByName(protoreflect.Name(b.Body))
			if fd == nil {
				return fmt.Errorf("%s: body %q is not a field", m.Descriptor().FullName(), b.Body)
			}
			if fd.Kind() != protoreflect.MessageKind {
				v, err := scalarFromJSON(fd, body)
				if err != nil {
					return err
				}
				m.Set(fd, v)
				target = nil
			} else {
				target = m.Mutable(fd).Message()
			}
		}
		if target != nil {
			if err := UnmarshalJSON(body, target); err != nil {
				return fmt.Errorf("request of %s: %w", m.Descriptor().FullName(), err)
			}
		}
	}
	for path, v := range params {
		if err := SetField(m, path, []string{v}, false); err != nil {
			return err
		}
	}
	for key, values := range query {
		if err := SetField(m, key, values, true); err != nil {
			return err
		}
	}
	return nil
}

// SetField sets the scalar field at a dotted path (field names, or with
// byJSON their JSON names) from text values; an unknown path is ignored,
// as a REST gateway ignores unknown query parameters.
func SetField(m protoreflect.Message, path string, values []string, byJSON bool) error {
	parts := strings.Split(path, ".")
	for i, part := range parts {
		fields := m.Descriptor().Fields()
		fd := fields.ByName(protoreflect.Name(part))
		if byJSON {
			fd = fields.ByJSONName(part)
		}
		if fd == nil || len(values) == 0 {
			return nil
		}
		if i < len(parts)-1 {
			if fd.Kind() != protoreflect.MessageKind || fd.IsList() || fd.IsMap() {
				return nil
			}
			m = m.Mutable(fd).Message()
			continue
		}
		if fd.Kind() == protoreflect.MessageKind || fd.IsMap() {
			return nil
		}
		if fd.IsList() {
			list := m.Mutable(fd).List()
			for _, v := range values {
				val, err := scalarFromText(fd, v)
				if err != nil {
					return err
				}
				list.Append(val)
			}
			return nil
		}
		val, err := scalarFromText(fd, values[0])
		if err != nil {
			return err
		}
		m.Set(fd, val)
	}
	return nil
}

// scalarFromText parses a path or query value of a scalar field.
func scalarFromText(fd protoreflect.FieldDescriptor, v string) (protoreflect.Value, error) {
	bad := func(err error) (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("%s: %q: %w", fd.JSONName(), v, err)
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v), nil
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(v)), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfBool(b), nil
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(v)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return bad(err)
		}
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), nil
	}
	val, err := scalar(fd, v)
	if err != nil {
		return bad(err)
	}
	return val, nil
}

// scalarFromJSON reads a scalar body: a JSON string or number.
func scalarFromJSON(fd protoreflect.FieldDescriptor, data []byte) (protoreflect.Value, error) {
	text := strings.TrimSpace(string(data))
	if unquoted, err := strconv.Unquote(text); err == nil {
		text = unquoted
	}
	return scalarFromText(fd, text)
}
