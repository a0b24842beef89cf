package argoapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The Kubernetes types whose JSON is not their message's fields.
const (
	timeType        protoreflect.FullName = "k8s.io.apimachinery.pkg.apis.meta.v1.Time"
	microTimeType   protoreflect.FullName = "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"
	durationType    protoreflect.FullName = "k8s.io.apimachinery.pkg.apis.meta.v1.Duration"
	quantityType    protoreflect.FullName = "k8s.io.apimachinery.pkg.api.resource.Quantity"
	intOrStringType protoreflect.FullName = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"
	rawType         protoreflect.FullName = "k8s.io.apimachinery.pkg.runtime.RawExtension"
	extJSONType     protoreflect.FullName = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON"
	fieldsV1Type    protoreflect.FullName = "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1"
)

// typeMeta are the keys of Kubernetes' TypeMeta, which Argo CD's Go types
// embed in JSON but its messages leave out.
var typeMeta = map[string]bool{"kind": true, "apiVersion": true}

// inline are the fields whose Go structs Argo CD embeds inline in JSON:
// their own fields appear in the enclosing object.
var inline = map[protoreflect.FullName]bool{
	v1alpha1 + ".ResourceNode.resourceRef":               true,
	v1alpha1 + ".KustomizeSelector.resId":                true,
	v1alpha1 + ".KustomizeResId.gvk":                     true,
	v1alpha1 + ".SyncStrategyHook.syncStrategyApply":     true,
	v1alpha1 + ".ApplicationSourcePluginParameter.map":   true,
	v1alpha1 + ".ApplicationSourcePluginParameter.array": true,
	"k8s.io.apimachinery.pkg.runtime.Unknown.typeMeta":   true,
}

// v1alpha1 is the package of Argo CD's resource types.
const v1alpha1 = "github.com.argoproj.argo_cd.v3.pkg.apis.application.v1alpha1"

// UnmarshalJSON fills m from the REST API's JSON of it. Keys that are no
// field of the message are skipped, as a newer server's fields are.
func UnmarshalJSON(data []byte, m protoreflect.Message) error {
	return decoder{}.unmarshal(data, m)
}

// UnmarshalJSONStrict is UnmarshalJSON that fails on a key that is no
// field of Argo CD's message, naming it: what a conformance test asks of
// Capstan's answers.
func UnmarshalJSONStrict(data []byte, m protoreflect.Message) error {
	return decoder{strict: true}.unmarshal(data, m)
}

// decoder reads JSON into messages.
type decoder struct{ strict bool }

func (d decoder) unmarshal(data []byte, m protoreflect.Message) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return d.fill(m, v)
}

// fill sets m from a decoded JSON value.
func (d decoder) fill(m protoreflect.Message, v any) error {
	if v == nil {
		return nil
	}
	md := m.Descriptor()
	if special, ok := fromSpecial[md.FullName()]; ok {
		return special(m, v)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want a JSON object, got %T", md.FullName(), v)
	}
	for key, val := range obj {
		target, fd := fieldFor(m, key)
		if fd == nil && d.strict && !typeMeta[key] {
			return fmt.Errorf("%s has no field %q", md.FullName(), key)
		}
		if fd == nil || val == nil {
			continue
		}
		if err := d.setField(target, fd, val); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return nil
}

// fieldFor finds the field a JSON key names, in m or in one of its inline
// fields, and the message that holds it.
func fieldFor(m protoreflect.Message, key string) (protoreflect.Message, protoreflect.FieldDescriptor) {
	fields := m.Descriptor().Fields()
	fd := fields.ByJSONName(key)
	if fd == nil {
		fd = fields.ByName(protoreflect.Name(key))
	}
	if fd != nil && !inline[fd.FullName()] {
		return m, fd
	}
	for i := 0; i < fields.Len(); i++ {
		if f := fields.Get(i); inline[f.FullName()] {
			if target, found := fieldFor(m.Mutable(f).Message(), key); found != nil {
				return target, found
			}
		}
	}
	return m, nil
}

func (d decoder) setField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any) error {
	switch {
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("want a JSON array, got %T", v)
		}
		list := m.Mutable(fd).List()
		for _, e := range arr {
			if fd.Kind() == protoreflect.MessageKind {
				el := list.NewElement()
				if err := d.fill(el.Message(), e); err != nil {
					return err
				}
				list.Append(el)
				continue
			}
			pv, err := scalar(fd, e)
			if err != nil {
				return err
			}
			list.Append(pv)
		}
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("want a JSON object, got %T", v)
		}
		mp := m.Mutable(fd).Map()
		for k, e := range obj {
			key, err := scalar(fd.MapKey(), k)
			if err != nil {
				return err
			}
			if fd.MapValue().Kind() == protoreflect.MessageKind {
				val := mp.NewValue()
				if err := d.fill(val.Message(), e); err != nil {
					return err
				}
				mp.Set(key.MapKey(), val)
				continue
			}
			if e == nil {
				continue
			}
			val, err := scalar(fd.MapValue(), e)
			if err != nil {
				return err
			}
			mp.Set(key.MapKey(), val)
		}
	case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
		return d.fill(m.Mutable(fd).Message(), v)
	default:
		pv, err := scalar(fd, v)
		if err != nil {
			return err
		}
		m.Set(fd, pv)
	}
	return nil
}

// scalar converts a JSON value to a field's scalar value.
func scalar(fd protoreflect.FieldDescriptor, v any) (protoreflect.Value, error) {
	text := fmt.Sprint(v)
	switch fd.Kind() {
	case protoreflect.StringKind:
		if s, ok := v.(string); ok {
			return protoreflect.ValueOfString(s), nil
		}
		return protoreflect.ValueOfString(text), nil
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(text)
		return protoreflect.ValueOfBool(b), err
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(text, 10, 32)
		return protoreflect.ValueOfInt32(int32(n)), err
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(text, 10, 64)
		return protoreflect.ValueOfInt64(n), err
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(text, 10, 32)
		return protoreflect.ValueOfUint32(uint32(n)), err
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(text, 10, 64)
		return protoreflect.ValueOfUint64(n), err
	case protoreflect.FloatKind:
		f, err := strconv.ParseFloat(text, 32)
		return protoreflect.ValueOfFloat32(float32(f)), err
	case protoreflect.DoubleKind:
		f, err := strconv.ParseFloat(text, 64)
		return protoreflect.ValueOfFloat64(f), err
	case protoreflect.BytesKind:
		b, err := base64.StdEncoding.DecodeString(text)
		return protoreflect.ValueOfBytes(b), err
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByName(protoreflect.Name(text)); ev != nil {
			return protoreflect.ValueOfEnum(ev.Number()), nil
		}
		n, err := strconv.ParseInt(text, 10, 32)
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(n)), err
	}
	return protoreflect.Value{}, fmt.Errorf("unsupported field kind %s", fd.Kind())
}

// fromSpecial reads the Kubernetes types whose JSON is a scalar or a
// whole document.
var fromSpecial = map[protoreflect.FullName]func(protoreflect.Message, any) error{
	timeType:      setTime,
	microTimeType: setTime,
	durationType: func(m protoreflect.Message, v any) error {
		d, err := time.ParseDuration(fmt.Sprint(v))
		if err != nil {
			return err
		}
		return setNamed(m, "duration", protoreflect.ValueOfInt64(int64(d)))
	},
	quantityType: func(m protoreflect.Message, v any) error {
		return setNamed(m, "string", protoreflect.ValueOfString(fmt.Sprint(v)))
	},
	intOrStringType: func(m protoreflect.Message, v any) error {
		if s, ok := v.(string); ok {
			if err := setNamed(m, "type", protoreflect.ValueOfInt64(1)); err != nil {
				return err
			}
			return setNamed(m, "strVal", protoreflect.ValueOfString(s))
		}
		n, err := strconv.ParseInt(fmt.Sprint(v), 10, 32)
		if err != nil {
			return err
		}
		if err := setNamed(m, "type", protoreflect.ValueOfInt64(0)); err != nil {
			return err
		}
		return setNamed(m, "intVal", protoreflect.ValueOfInt32(int32(n)))
	},
	rawType:     setRaw,
	extJSONType: setRaw,
	fieldsV1Type: func(m protoreflect.Message, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return setNamed(m, "Raw", protoreflect.ValueOfBytes(data))
	},
}

func setTime(m protoreflect.Message, v any) error {
	t, err := time.Parse(time.RFC3339Nano, fmt.Sprint(v))
	if err != nil {
		return err
	}
	if err := setNamed(m, "seconds", protoreflect.ValueOfInt64(t.Unix())); err != nil {
		return err
	}
	if t.Nanosecond() == 0 {
		return nil
	}
	return setNamed(m, "nanos", protoreflect.ValueOfInt32(int32(t.Nanosecond())))
}

func setRaw(m protoreflect.Message, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return setNamed(m, "raw", protoreflect.ValueOfBytes(data))
}

// setNamed sets a field by name, converting the value to the field's kind
// where both are integers.
func setNamed(m protoreflect.Message, name protoreflect.Name, v protoreflect.Value) error {
	fd := m.Descriptor().Fields().ByName(name)
	if fd == nil {
		return fmt.Errorf("%s has no field %s", m.Descriptor().FullName(), name)
	}
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if n, ok := v.Interface().(int64); ok {
			if n > math.MaxInt32 || n < math.MinInt32 {
				return fmt.Errorf("%s: %d is out of range", name, n)
			}
			v = protoreflect.ValueOfInt32(int32(n))
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		if n, ok := v.Interface().(int32); ok {
			v = protoreflect.ValueOfInt64(int64(n))
		}
	}
	m.Set(fd, v)
	return nil
}

// FillRequired sets every unset required field of m (and of the messages
// it holds) to its zero value: Argo CD's schema marks some fields
// required (a log entry's last), which a JSON answer leaves out when
// false, and a message missing one cannot be sent.
func FillRequired(m protoreflect.Message) {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required && !m.Has(fd) {
			if fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind {
				m.Mutable(fd)
			} else {
				m.Set(fd, fd.Default())
			}
		}
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				FillRequired(v.List().Get(i).Message())
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
				FillRequired(e.Message())
				return true
			})
		case !fd.IsList() && !fd.IsMap() && fd.Message() != nil:
			FillRequired(v.Message())
		}
		return true
	})
}
