package argoapi

import (
	"encoding/base64"
	"encoding/json"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// MarshalJSON writes m as the REST API's JSON: fields by their JSON names
// (only those set), 64-bit integers as numbers, and Kubernetes' JSON forms
// of times, durations, quantities, int-or-strings and raw objects.
func MarshalJSON(m protoreflect.Message) ([]byte, error) {
	return json.Marshal(value(m))
}

// value is the JSON value of a message.
func value(m protoreflect.Message) any {
	md := m.Descriptor()
	if special, ok := toSpecial[md.FullName()]; ok {
		return special(m)
	}
	out := map[string]any{}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if inline[fd.FullName()] {
			if fields, ok := value(v.Message()).(map[string]any); ok {
				for k, e := range fields {
					out[k] = e
				}
			}
			return true
		}
		out[fd.JSONName()] = fieldValue(fd, v)
		return true
	})
	return out
}

func fieldValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch {
	case fd.IsList():
		list := v.List()
		out := make([]any, list.Len())
		for i := range out {
			out[i] = single(fd, list.Get(i))
		}
		return out
	case fd.IsMap():
		out := map[string]any{}
		v.Map().Range(func(k protoreflect.MapKey, e protoreflect.Value) bool {
			out[k.String()] = single(fd.MapValue(), e)
			return true
		})
		return out
	}
	return single(fd, v)
}

func single(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return value(v.Message())
	case protoreflect.BytesKind:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return int32(v.Enum())
	}
	return v.Interface()
}

// toSpecial writes the Kubernetes types whose JSON is a scalar or a whole
// document.
var toSpecial = map[protoreflect.FullName]func(protoreflect.Message) any{
	timeType:      timeValue,
	microTimeType: timeValue,
	durationType: func(m protoreflect.Message) any {
		return time.Duration(named(m, "duration").Int()).String()
	},
	quantityType: func(m protoreflect.Message) any { return named(m, "string").String() },
	intOrStringType: func(m protoreflect.Message) any {
		if named(m, "type").Int() == 1 {
			return named(m, "strVal").String()
		}
		return named(m, "intVal").Int()
	},
	rawType:     rawValue,
	extJSONType: rawValue,
	fieldsV1Type: func(m protoreflect.Message) any {
		if raw := named(m, "Raw").Bytes(); len(raw) > 0 {
			return json.RawMessage(raw)
		}
		return nil
	},
}

func timeValue(m protoreflect.Message) any {
	t := time.Unix(named(m, "seconds").Int(), named(m, "nanos").Int()).UTC()
	if t.Nanosecond() == 0 {
		return t.Format(time.RFC3339)
	}
	return t.Format(time.RFC3339Nano)
}

func rawValue(m protoreflect.Message) any {
	raw := named(m, "raw").Bytes()
	if len(raw) == 0 {
		return nil
	}
	return json.RawMessage(raw)
}

// named returns a field's value by name (its default when unset or absent).
func named(m protoreflect.Message, name protoreflect.Name) protoreflect.Value {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		return protoreflect.ValueOfInt64(0)
	}
	return m.Get(fd)
}
