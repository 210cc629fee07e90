package output

import (
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
)

// shapeCache keeps, per message type and sequence of field keys, the JSON
// that surrounds a record's field values: `,"type":"T","fields":{"k0":`,
// then `,"k1":` and so on. The records of one type carry the same keys
// (string constants of the dissector) in the same order, so comparing
// addresses with a cached shape replaces a lookup per key. Like jsonCache,
// an entry holds the strings it was made from, so an address it holds is
// never reused for other text while it is cached.
type shapeCache struct {
	slots [16]shape
}

// maxShape is the most fields a cached shape has; a record with more is
// written key by key.
const maxShape = 16

type shape struct {
	typ  string
	keys []string
	ends []int  // enc[ends[i-1]:ends[i]] goes before value i (ends[-1] = 0)
	enc  []byte // `,"type":"T","fields":{"k0":`, `,"k1":`, ...
}

// append writes r's type and fields: `,"type":...,"fields":{...}`.
func (c *shapeCache) append(j *JSON, b []byte, r *dissect.Record) []byte {
	fs := r.Fields
	if len(fs) > maxShape {
		b = append(b, `,"type":`...)
		b = j.strs.append(b, r.Type)
		b = append(b, `,"fields":`...)
		return j.appendObject(b, fs)
	}
	s := &c.slots[(uint(uintptr(unsafe.Pointer(unsafe.StringData(r.Type))))>>3^uint(len(fs)))%uint(len(c.slots))]
	if !s.matches(r.Type, fs) {
		s.typ, s.keys, s.ends = r.Type, s.keys[:0], s.ends[:0]
		s.enc = append(s.enc[:0], `,"type":`...)
		s.enc = j.strs.append(s.enc, r.Type)
		s.enc = append(s.enc, `,"fields":{`...)
		for i := range fs {
			if i > 0 {
				s.enc = append(s.enc, ',')
			}
			s.enc = j.keys.appendKey(s.enc, fs[i].Key)
			s.keys = append(s.keys, fs[i].Key)
			s.ends = append(s.ends, len(s.enc))
		}
	}
	if len(fs) == 0 {
		b = append(b, s.enc...)
		return append(b, '}')
	}
	start := 0
	for i := range fs {
		b = append(b, s.enc[start:s.ends[i]]...)
		start = s.ends[i]
		b = j.appendValue(b, &fs[i].Value)
	}
	return append(b, '}')
}

// matches reports whether s is the shape of a record of type typ with
// fields fs, comparing strings by address and length.
func (s *shape) matches(typ string, fs []dissect.Field) bool {
	if len(s.keys) != len(fs) || !same(s.typ, typ) || len(s.enc) == 0 {
		return false
	}
	for i, k := range s.keys {
		if !same(k, fs[i].Key) {
			return false
		}
	}
	return true
}

// same reports whether a and b are the same bytes in memory.
func same(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b) && len(a) == len(b)
}
