package parquetout

import (
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/strcache"
)

// tableCache finds a record's table by the address of its type string
// (internal/strcache, as stats' declCache does): protocols name their
// types with strings that come back at the same address, so most records
// cost neither Options.Decl's map lookups nor the writer's own. A record
// whose declaration has a Variant (HandControl's request and response of
// one type) or that matches none (a variant no declaration covers) is
// looked up every time, since the next record of its type may match
// another declaration. Without Options.Decl every record is undeclared
// and its table depends on its proto and type only.
type tableCache struct {
	c strcache.Cache[cachedTable] // made on first use
}

type cachedTable struct {
	proto string
	t     *table // nil: look up every record of the type
}

// tableCacheBits sizes the cache: 64 slots, more than the types of a run
// usually are.
const tableCacheBits = 6

// tableOf returns r's table, made on r's first record.
func (w *Writer) tableOf(r *dissect.Record) (*table, error) {
	if !w.cache.c.Made() {
		w.cache.c = strcache.New[cachedTable](tableCacheBits)
	}
	e, hit := w.cache.c.Lookup(r.Type)
	if hit && e.t != nil && e.proto == r.Proto {
		return e.t, nil
	}
	var d *dissect.TypeDecl
	if w.o.Decl != nil {
		d = w.o.Decl(r)
	}
	t, err := w.table(r, d)
	if err != nil {
		*e = cachedTable{}
		return nil, err
	}
	if w.o.Decl == nil || d != nil && d.Variant == nil {
		*e = cachedTable{proto: r.Proto, t: t}
	} else {
		*e = cachedTable{}
	}
	return t, nil
}
