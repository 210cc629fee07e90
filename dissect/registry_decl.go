package dissect

import (
	"fmt"
	"reflect"
	"slices"
)

// protoDecls indexes the declared types of one "proto" key (several
// protocols may share one: neptune and neptune-wiki).
type protoDecls struct {
	types    []*TypeDecl
	byType   map[string][]*TypeDecl // variants share a type
	wildcard *TypeDecl              // "*"
}

// index adds e's declared types to r.byProto, checking them.
func (r *Registry) index(e *entry) error {
	if err := Validate(e.info.Proto, e.info.Types); err != nil {
		return err
	}
	p := r.byProto[e.info.Proto]
	if p == nil {
		p = &protoDecls{byType: map[string][]*TypeDecl{}}
		r.byProto[e.info.Proto] = p
		r.protoKeys = append(r.protoKeys, e.info.Proto)
	}
	for i := range e.info.Types {
		t := &e.info.Types[i]
		if t.Type == TypeGap || t.Type == TypeSkipped {
			return fmt.Errorf("dissect: %s declares %q, which every stream shares (EventTypes)", e.info.Name, t.Type)
		}
		if same, err := p.declared(t); err != nil {
			return fmt.Errorf("dissect: proto %q: %w", e.info.Proto, err)
		} else if same {
			continue // declared alike by another protocol of the key
		}
		p.types = append(p.types, t)
		if t.Type == "*" {
			p.wildcard = t
		} else {
			p.byType[t.Type] = append(p.byType[t.Type], t)
		}
	}
	return nil
}

// declared reports whether another protocol of the key declared t
// already, identically; one declared otherwise under t's table (or as a
// plain type where t has variants, or the reverse) is an error, since a
// record could not tell which it is.
func (p *protoDecls) declared(t *TypeDecl) (bool, error) {
	if t.Type == "*" && p.wildcard != nil || t.Type != "*" && len(p.byType[t.Type]) > 0 {
		for _, o := range append(p.byType[t.Type], p.wildcard) {
			if o != nil && o.Table() == t.Table() && reflect.DeepEqual(o, t) {
				return true, nil
			}
		}
		for _, o := range p.byType[t.Type] {
			if o.Table() == t.Table() || o.Variant == nil || t.Variant == nil {
				return false, fmt.Errorf("type %q declared differently by two protocols", t.Table())
			}
		}
		if t.Type == "*" {
			return false, fmt.Errorf("type \"*\" declared differently by two protocols")
		}
	}
	return false, nil
}

// Decl returns the declaration rec matches: gap and skipped match
// [EventTypes] whatever the proto; other records their protocol's type
// (of a type with variants, the variant its key selects), else the
// protocol's "*" type. It returns nil for a record that matches no
// declaration, which is a protocol's bug (dissecttest checks for it).
func (r *Registry) Decl(rec *Record) *TypeDecl {
	switch rec.Type {
	case TypeGap:
		return &r.events[0]
	case TypeSkipped:
		return &r.events[1]
	}
	p := r.byProto[rec.Proto]
	if p == nil {
		return nil
	}
	ts := p.byType[rec.Type]
	if len(ts) == 1 && ts[0].Variant == nil {
		return ts[0]
	}
	for _, t := range ts {
		if v, ok := rec.Fields.Get(t.Variant.Key); ok && v.Kind() == KindString && v.Str() == t.Variant.Value {
			return t
		}
	}
	if len(ts) > 0 {
		return nil // a variant no declaration covers
	}
	return p.wildcard
}

// Types returns the declared types of the protocols whose "proto" key is
// proto, in order of declaration; EventTypes for "*".
func (r *Registry) Types(proto string) []*TypeDecl {
	if proto == "*" {
		return []*TypeDecl{&r.events[0], &r.events[1]}
	}
	if p := r.byProto[proto]; p != nil {
		return slices.Clone(p.types)
	}
	return nil
}

// Protos returns the distinct "proto" keys of the registered protocols,
// in registry order.
func (r *Registry) Protos() []string { return slices.Clone(r.protoKeys) }
