package spec

import (
	"go.yaml.in/yaml/v4"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/layout"
)

// The loader's sections of message types: messages, types, enums.

func (l *loader) messages(n *yaml.Node) error {
	keys, err := l.mapping(n, "messages", messagesKeys...)
	if err != nil {
		return err
	}
	m := &layout.Switch{}
	for _, e := range keys {
		switch e.key {
		case "switch-on":
			m.On, err = l.str(e.v, "messages.switch-on")
		case "cases":
			m.Cases, _, err = l.cases(e.v, "messages.cases", false)
		case "default":
			m.Default, err = l.str(e.v, "messages.default")
		}
		if err != nil {
			return err
		}
	}
	if m.On == "" {
		return l.errf(n, "messages: no switch-on (the frame field that names the message type)")
	}
	l.s.Messages = m
	return nil
}

// cases reads the cases of a switch: VALUE: TYPE, and with kaitai (a
// field's switch) "_: TYPE" for the default.
func (l *loader) cases(n *yaml.Node, what string, kaitai bool) ([]layout.Case, string, error) {
	keys, err := l.mapping(n, what)
	if err != nil {
		return nil, "", err
	}
	var out []layout.Case
	def := ""
	for _, e := range keys {
		t, err := l.str(e.v, what)
		if err != nil {
			return nil, "", err
		}
		if kaitai && e.key == "_" {
			def = t
			continue
		}
		v, err := l.int(e.k, what, -1<<63, 1<<63-1)
		if err != nil {
			return nil, "", err
		}
		out = append(out, layout.Case{Value: v, Type: t})
	}
	return out, def, nil
}

func (l *loader) types(n *yaml.Node) error {
	keys, err := l.mapping(n, "types")
	if err != nil {
		return err
	}
	for _, e := range keys {
		if e.key == FrameType {
			return l.errf(e.k, "types: %q is the name of the frame's own fields (seq)", FrameType)
		}
		tk, err := l.mapping(e.v, "type "+esc(e.key), typeKeys...)
		if err != nil {
			return err
		}
		l.s.At["types."+e.key] = l.pos(e.k)
		t := layout.Type{Name: e.key, At: l.pos(e.k)}
		var meta TypeMeta
		for _, x := range tk {
			switch x.key {
			case "doc":
				t.Doc, err = l.str(x.v, "doc")
			case "seq":
				t.Seq, err = l.seq(x.v)
			case "heartbeat":
				meta.Heartbeat, err = l.bool(x.v, "heartbeat")
			case "answers":
				meta.Exchange.Role = dissect.Reply
				meta.Exchange.Answers, err = l.str(x.v, "answers")
			case "exchange":
				switch x.v.Value {
				case "request":
					meta.Exchange.Role = dissect.Request
				case "reply":
					meta.Exchange.Role = dissect.Reply
				default:
					err = l.errf(x.v, "exchange: want request or reply")
				}
			}
			if err != nil {
				return err
			}
		}
		if meta != (TypeMeta{}) {
			if l.s.Meta == nil {
				l.s.Meta = map[string]TypeMeta{}
			}
			l.s.Meta[e.key] = meta
		}
		l.s.Schema.Types = append(l.s.Schema.Types, t)
	}
	return nil
}

func (l *loader) enums(n *yaml.Node) error {
	keys, err := l.mapping(n, "enums")
	if err != nil {
		return err
	}
	for _, e := range keys {
		vals, err := l.mapping(e.v, "enum "+esc(e.key))
		if err != nil {
			return err
		}
		en := layout.Enum{Name: e.key, At: l.pos(e.k)}
		for _, x := range vals {
			v, err := l.int(x.k, "enum "+esc(e.key), -1<<63, 1<<63-1)
			if err != nil {
				return err
			}
			name := x.v.Value
			if x.v.Kind == yaml.MappingNode { // Kaitai's {id: NAME, doc: ...}
				ks, err := l.mapping(x.v, "enum value", "id", "doc")
				if err != nil {
					return err
				}
				name = ""
				for _, k := range ks {
					if k.key == "id" {
						name = k.v.Value
					}
				}
			}
			if name == "" || x.v.Kind == yaml.SequenceNode {
				return l.errf(x.v, "enum %s: value %d has no name", esc(e.key), v)
			}
			en.Values = append(en.Values, layout.EnumValue{Value: v, Name: name})
		}
		l.s.Schema.Enums = append(l.s.Schema.Enums, en)
	}
	return nil
}
