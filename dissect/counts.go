package dissect

import (
	"slices"
	"unsafe"

	"github.com/dissect-tools/dissect/internal/strcache"
)

// TypeCount is the number of messages of one type of one protocol.
type TypeCount struct {
	Proto string
	Type  string
	Count int64
}

// TypeCounts counts messages per protocol and type, keeping the order in
// which the types first appeared. The zero value is empty and ready to use;
// a TypeCounts is used from one goroutine.
//
// [TypeCounts.Add] is on the hot path of summary-only runs and allocates
// nothing once a type has been seen: protocols name their types with string
// constants, so the address of a type string finds its row without hashing
// (see package internal/strcache); a miss falls back to a search by value.
type TypeCounts struct {
	rows  []TypeCount
	hot   [16]hotType           // direct-mapped by the type string's address: checked first
	cache strcache.Cache[int32] // type string → index into rows; made on first use
	index map[typeKey]int32     // made when rows outgrow a linear search
}

// hotType is a row found by the addresses and lengths of its strings.
type hotType struct {
	typ, proto *byte
	tn, pn     int
	row        int32
}

type typeKey struct{ proto, typ string }

// linearRows is how many rows are searched one by one before a map is made.
const linearRows = 16

// Add counts one message of type typ of protocol proto.
func (c *TypeCounts) Add(proto, typ string) { c.AddN(proto, typ, 1) }

// AddN counts n messages of type typ of protocol proto.
func (c *TypeCounts) AddN(proto, typ string, n int64) {
	tp := unsafe.StringData(typ)
	h := &c.hot[uintptr(unsafe.Pointer(tp))>>3&15]
	if h.typ == tp && tp != nil && h.proto == unsafe.StringData(proto) && h.tn == len(typ) && h.pn == len(proto) {
		c.rows[h.row].Count += n
		return
	}
	i := c.lookup(proto, typ)
	c.rows[i].Count += n
	if len(typ) > 0 && len(proto) > 0 {
		*h = hotType{typ: tp, proto: unsafe.StringData(proto), tn: len(typ), pn: len(proto), row: i}
	}
}

// lookup finds the row of (proto, typ) through the address cache, adding
// it if new.
func (c *TypeCounts) lookup(proto, typ string) int32 {
	if !c.cache.Made() {
		c.cache = strcache.New[int32](5)
	}
	slot, hit := c.cache.Lookup(typ)
	if hit {
		// The slot holds typ, so rows[*slot].Type == typ; the same type
		// string may be shared by two protocols ("unknown").
		if c.rows[*slot].Proto == proto {
			return *slot
		}
	}
	i := c.find(proto, typ)
	*slot = i
	return i
}

// find returns the index of the row of (proto, typ), adding it if new.
func (c *TypeCounts) find(proto, typ string) int32 {
	if c.index != nil {
		if i, ok := c.index[typeKey{proto, typ}]; ok {
			return i
		}
	} else {
		for i := range c.rows {
			if c.rows[i].Type == typ && c.rows[i].Proto == proto {
				return int32(i)
			}
		}
	}
	i := int32(len(c.rows))
	c.rows = append(c.rows, TypeCount{Proto: proto, Type: typ})
	switch {
	case c.index != nil:
		c.index[typeKey{proto, typ}] = i
	case len(c.rows) > linearRows:
		c.index = make(map[typeKey]int32, 2*len(c.rows))
		for j, r := range c.rows {
			c.index[typeKey{r.Proto, r.Type}] = int32(j)
		}
	}
	return i
}

// Merge adds the counts of other (nil: none), keeping the order of first
// appearance: types new to c come after c's, in other's order.
func (c *TypeCounts) Merge(other *TypeCounts) {
	if other == nil {
		return
	}
	for _, r := range other.rows {
		c.AddN(r.Proto, r.Type, r.Count)
	}
}

// Rows returns a copy of the counts, per protocol and type, in order of
// first appearance.
func (c *TypeCounts) Rows() []TypeCount { return slices.Clone(c.rows) }

// Len is the number of distinct (protocol, type) pairs counted.
func (c *TypeCounts) Len() int { return len(c.rows) }

// Total is the number of messages counted.
func (c *TypeCounts) Total() int64 {
	var n int64
	for _, r := range c.rows {
		n += r.Count
	}
	return n
}
