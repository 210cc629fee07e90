package stats

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/strcache"
)

// declCache looks up the declaration of each (proto, type) once: a
// record's type string finds the declaration by its address
// (internal/strcache), as protocols name their types with strings that
// come back at the same address, so that most records cost no lookup by
// contents. A type declared with variants, or that no declaration
// matches, is looked up again for every record, since its records may
// match different declarations.
type declCache struct {
	fn    DeclFunc
	cache strcache.Cache[cachedDecl] // made on first use
}

type cachedDecl struct {
	proto string
	decl  *dissect.TypeDecl
	each  bool // look up every record of the type
}

// declCacheBits sizes the cache: 64 slots, more than the types of a run
// usually are.
const declCacheBits = 6

// of returns the declaration r matches, or nil (always nil without a
// DeclFunc).
func (c *declCache) of(r *dissect.Record) *dissect.TypeDecl {
	if c.fn == nil {
		return nil
	}
	if !c.cache.Made() {
		c.cache = strcache.New[cachedDecl](declCacheBits)
	}
	e, hit := c.cache.Lookup(r.Type)
	if hit && e.proto == r.Proto && !e.each {
		return e.decl
	}
	d := c.fn(r)
	*e = cachedDecl{proto: r.Proto, decl: d, each: d == nil || d.Variant != nil}
	return d
}
