package spec

import (
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// seq reads a list of fields.
func (l *loader) seq(n *yaml.Node) ([]layout.Field, error) {
	items, err := l.list(n, "seq")
	if err != nil {
		return nil, err
	}
	out := make([]layout.Field, 0, len(items))
	for _, it := range items {
		f, err := l.field(it)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func roleByName(s string) (dissect.Role, bool) {
	for r := dissect.RoleNone + 1; r.String() != "role?"; r++ {
		if r.String() == s && r != dissect.RoleLatency {
			return r, true
		}
	}
	return 0, false
}

func roleNames() []string {
	var out []string
	for r := dissect.RoleNone + 1; r.String() != "role?"; r++ {
		if r != dissect.RoleLatency {
			out = append(out, r.String())
		}
	}
	return out
}

func (l *loader) field(n *yaml.Node) (layout.Field, error) {
	keys, err := l.mapping(n, "field", fieldKeys...)
	f := layout.Field{At: l.pos(n)}
	if err != nil {
		return f, err
	}
	for _, e := range keys {
		what := e.key
		var v int64
		switch e.key {
		case "id":
			f.ID, err = l.str(e.v, what)
		case "doc":
			f.Doc, err = l.str(e.v, what)
		case "unit":
			f.Unit, err = l.str(e.v, what)
		case "enum":
			f.Enum, err = l.str(e.v, what)
		case "encoding":
			f.Encoding, err = l.str(e.v, what)
		case "type":
			if e.v.Kind == yaml.MappingNode {
				f.Switch, err = l.fieldSwitch(e.v)
			} else {
				f.Type, err = l.str(e.v, what)
			}
		case "size":
			f.Size, err = l.ref(e.v, what)
		case "repeat-expr":
			f.RepeatExpr, err = l.ref(e.v, what)
		case "size-eos":
			f.SizeEOS, err = l.bool(e.v, what)
		case "contents":
			f.Contents, err = l.bytesOf(e.v, what)
			if err == nil && len(f.Contents) == 0 {
				err = l.errf(e.v, "contents: empty")
			}
		case "terminator", "pad-right":
			v, err = l.int(e.v, what, 0, 255)
			b := byte(v)
			if e.key == "terminator" {
				f.Terminator = &b
			} else {
				f.PadRight = &b
			}
		case "repeat":
			switch e.v.Value {
			case "expr":
				f.Repeat = layout.RepeatExpr
			case "eos":
				f.Repeat = layout.RepeatEOS
			case "until":
				f.Repeat = layout.RepeatUntil
			default:
				err = l.errf(e.v, "repeat: want expr, eos or until")
			}
		case "repeat-until":
			// a value, or Kaitai's "_ == VALUE"
			s := strings.TrimSpace(strings.TrimPrefix(strings.ReplaceAll(e.v.Value, " ", ""), "_=="))
			x, perr := strconv.ParseInt(s, 0, 64)
			if perr != nil || e.v.Kind != yaml.ScalarNode {
				err = l.errf(e.v, "repeat-until: want the value that ends the array (0, or _ == 0); no other expression is read")
			}
			f.RepeatUntil = &x
		case "valid":
			f.Valid, err = l.valid(e.v)
		case "role":
			r, ok := roleByName(e.v.Value)
			if !ok {
				err = l.errf(e.v, "role: %q: want one of %s", clip(e.v.Value), strings.Join(roleNames(), ", "))
			}
			f.Role = r
		case "scale":
			f.Scale, err = l.float(e.v, what)
		case "offset":
			f.Offset, err = l.float(e.v, what)
		case "fixed-point":
			v, err = l.int(e.v, what, 0, 63)
			f.Scale = math.Ldexp(1, -int(v))
		}
		if err != nil {
			return f, err
		}
	}
	if f.Offset != 0 && f.Scale == 0 {
		f.Scale = 1
	}
	return f, nil
}

// ref reads a number or the id of an earlier field.
func (l *loader) ref(n *yaml.Node, what string) (layout.Ref, error) {
	if isInt(n) {
		v, err := l.int(n, what, 0, 1<<40)
		return layout.Num(v), err
	}
	s, err := l.str(n, what)
	if err != nil {
		return layout.Ref{}, err
	}
	return layout.FieldRef(s), nil
}

func (l *loader) fieldSwitch(n *yaml.Node) (*layout.Switch, error) {
	keys, err := l.mapping(n, "type", switchKeys...)
	if err != nil {
		return nil, err
	}
	sw := &layout.Switch{}
	for _, e := range keys {
		switch e.key {
		case "switch-on":
			sw.On, err = l.str(e.v, "switch-on")
		case "cases":
			sw.Cases, sw.Default, err = l.cases(e.v, "cases", true)
		}
		if err != nil {
			return nil, err
		}
	}
	if sw.On == "" {
		return nil, l.errf(n, "type: a switch needs switch-on (the earlier field it reads)")
	}
	return sw, nil
}

func (l *loader) valid(n *yaml.Node) (*layout.Valid, error) {
	if n.Kind == yaml.ScalarNode {
		v, err := l.int(n, "valid", -1<<63, 1<<63-1)
		return &layout.Valid{AnyOf: []int64{v}}, err
	}
	keys, err := l.mapping(n, "valid", validKeys...)
	if err != nil {
		return nil, err
	}
	v := &layout.Valid{}
	for _, e := range keys {
		var x int64
		switch e.key {
		case "min":
			x, err = l.int(e.v, "valid.min", -1<<63, 1<<63-1)
			v.Min = &x
		case "max":
			x, err = l.int(e.v, "valid.max", -1<<63, 1<<63-1)
			v.Max = &x
		case "eq":
			x, err = l.int(e.v, "valid.eq", -1<<63, 1<<63-1)
			v.AnyOf = append(v.AnyOf, x)
		case "any-of":
			var items []*yaml.Node
			if items, err = l.list(e.v, "valid.any-of"); err != nil {
				return nil, err
			}
			if len(items) > 256 {
				return nil, l.errf(e.v, "valid.any-of: more than 256 values")
			}
			for _, it := range items {
				if x, err = l.int(it, "valid.any-of", -1<<63, 1<<63-1); err != nil {
					return nil, err
				}
				v.AnyOf = append(v.AnyOf, x)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}
