package dissect

import "strings"

// KnownField reports whether proto is the "proto" key of a registered
// protocol and, when field is not "", whether field names one of its
// fields. field is a key below the protocol ("x", "quat"; the filter
// compiler checks only the first key of a path); a longer path ("quat.w",
// "pos[0]", "payload.emg_status") is judged by its first key too, so keys
// below a declared object or a "payload.*" wildcard are known. Several
// protocols may share a proto key (neptune and neptune-wiki): a field of
// any of them is known.
func (r *Registry) KnownField(proto, field string) bool {
	if proto == "" {
		return false
	}
	first := firstSegment(field)
	for i := range r.entries {
		in := &r.entries[i].info
		if in.Proto != proto {
			continue
		}
		if field == "" {
			return true
		}
		for _, f := range in.Fields {
			if firstSegment(f.Name) == first {
				return true
			}
		}
	}
	return false
}

// firstSegment returns the first key of a field path: what precedes the
// first '.' or '['.
func firstSegment(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// FieldsOf returns the documented fields of the protocols whose "proto"
// key is proto (several protocols may share one).
func (r *Registry) FieldsOf(proto string) []FieldInfo {
	var out []FieldInfo
	for i := range r.entries {
		if in := &r.entries[i].info; in.Proto == proto {
			out = append(out, in.Fields...)
		}
	}
	return out
}
