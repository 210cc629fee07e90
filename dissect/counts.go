package dissect

import (
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/dissect-tools/dissect/internal/strcache"
)

// TypeCount is the number of messages of one type of one protocol.
type TypeCount struct {
	Proto string
	Type  string
	Count int64
	// Folded > 0 marks the row of a protocol's types beyond the cap of a
	// [TypeCounts]: Type is [OtherTypes] and Count counts the messages of
	// Folded distinct types (at least that many when FoldedAtLeast: past
	// [maxFoldedSeen] distinct folded types they are no longer told apart).
	Folded        int64
	FoldedAtLeast bool
}

// Bounds of a [TypeCounts]. Message types come from the wire (a VRPN
// connection names its own), so the rows are capped: past MaxTypeRows
// distinct (protocol, type) pairs, a new type's messages are counted in one
// row per protocol, [OtherTypes], which also counts how many distinct types
// it holds. The records themselves keep their real type.
//
// 1,024 rows: every protocol's declared types together are well under a
// hundred, mainline VRPN registers a few dozen names per connection and the
// summary prints 20 types per protocol, so a real capture never comes near
// it; a row costs about 100 bytes plus its type name (VRPN keeps at most
// 255 bytes of a name), so the table stays under 400 KB however many names
// the wire invents (it grew by a row per name: 400 connections × 4,096
// names held 806 MB).
const (
	MaxTypeRows = 1024
	// OtherTypes is the Type of the row of the types beyond MaxTypeRows.
	OtherTypes = "(other types)"
	// maxFoldedSeen bounds the hashes kept to tell folded types apart
	// (16 bytes each in a map: about 2 MB at most).
	maxFoldedSeen = 1 << 16
)

// TypeCounts counts messages per protocol and type, keeping the order in
// which the types first appeared. The zero value is empty and ready to use;
// a TypeCounts is used from one goroutine.
//
// [TypeCounts.Add] is on the hot path of summary-only runs and allocates
// nothing once a type has been seen: protocols name their types with string
// constants, so the address of a type string finds its row without hashing
// (see package internal/strcache); a miss falls back to a search by value.
// A type folded into [OtherTypes] is found the same way, so counting stays
// allocation-free past the cap too.
type TypeCounts struct {
	rows  []TypeCount
	hot   [16]hotType           // direct-mapped by the type string's address: checked first
	cache strcache.Cache[int32] // type string → index into rows; made on first use
	index map[typeKey]int32     // made when rows outgrow a linear search; real rows only

	limit  int                          // cap on the real rows; 0: MaxTypeRows
	keep   func(proto, typ string) bool // types that get a row past the cap too
	real   int                          // rows that are not OtherTypes rows
	others []int32                      // the OtherTypes rows, one per protocol that folded
	folded map[uint64]int32             // hash of a folded (proto, type) → its OtherTypes row
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
	c.addMiss(h, proto, typ, n)
}

// addMiss is AddN for a type not in its hot slot h: apart, so that AddN
// saves nothing on the stack for the calls made here.
func (c *TypeCounts) addMiss(h *hotType, proto, typ string, n int64) {
	tp := unsafe.StringData(typ)
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

// find returns the index of the row of (proto, typ), adding it if new, or
// the protocol's OtherTypes row when the table is full.
func (c *TypeCounts) find(proto, typ string) int32 {
	if c.index != nil {
		if i, ok := c.index[typeKey{proto, typ}]; ok {
			return i
		}
	} else {
		for i := range c.rows {
			if c.rows[i].Type == typ && c.rows[i].Proto == proto && c.rows[i].Folded == 0 {
				return int32(i)
			}
		}
	}
	if c.real >= c.Limit() && (c.keep == nil || !c.keep(proto, typ)) {
		return c.fold(proto, typ)
	}
	i := int32(len(c.rows))
	c.rows = append(c.rows, TypeCount{Proto: proto, Type: typ})
	c.real++
	switch {
	case c.index != nil:
		c.index[typeKey{proto, typ}] = i
	case len(c.rows) > linearRows:
		c.index = make(map[typeKey]int32, 2*len(c.rows))
		for j, r := range c.rows {
			if r.Folded == 0 {
				c.index[typeKey{r.Proto, r.Type}] = int32(j)
			}
		}
	}
	return i
}

// SetLimit sets the cap on distinct (protocol, type) rows (n <= 0:
// [MaxTypeRows]). Rows already counted stay.
func (c *TypeCounts) SetLimit(n int) { c.limit = n }

// SetKeep names the types that get their own row even past the cap:
// those a protocol declares by name ([Registry.DeclaresType]), a bounded
// set, so that "unknown" or "cookie" are never folded among the names a
// wire invented. Rows already counted stay.
func (c *TypeCounts) SetKeep(keep func(proto, typ string) bool) { c.keep = keep }

// DeclaresType reports whether a protocol of key proto declares type typ
// by name (not through "*").
func (r *Registry) DeclaresType(proto, typ string) bool {
	p := r.byProto[proto]
	return p != nil && len(p.byType[typ]) > 0
}

// Limit is the cap on distinct (protocol, type) rows.
func (c *TypeCounts) Limit() int {
	if c.limit <= 0 {
		return MaxTypeRows
	}
	return c.limit
}

// otherRow returns the index of proto's OtherTypes row, adding it if new.
func (c *TypeCounts) otherRow(proto string) int32 {
	for _, i := range c.others {
		if c.rows[i].Proto == proto {
			return i
		}
	}
	i := int32(len(c.rows))
	// Folded is set at once by the caller: a row with Folded 0 is real.
	c.rows = append(c.rows, TypeCount{Proto: proto, Type: OtherTypes})
	c.others = append(c.others, i)
	return i
}

// fold counts (proto, typ) as one more distinct type of proto's
// OtherTypes row unless it was folded before, and returns that row.
func (c *TypeCounts) fold(proto, typ string) int32 {
	i := c.otherRow(proto)
	c.foldHash(maphash.String(foldSeed, typ)^maphash.String(foldSeed, proto)*0x9E3779B97F4A7C15, i)
	return i
}

// foldSeed seeds the hashes that tell folded types apart; set once, so that
// the hashes of two TypeCounts compare ([TypeCounts.Merge]).
var foldSeed = maphash.MakeSeed()

// foldHash records the folded type of hash h in row i, if new.
func (c *TypeCounts) foldHash(h uint64, i int32) {
	r := &c.rows[i]
	if c.folded == nil {
		c.folded = make(map[uint64]int32)
	}
	if _, ok := c.folded[h]; ok {
		return
	}
	if len(c.folded) >= maxFoldedSeen {
		r.FoldedAtLeast = true
		r.Folded = max(r.Folded, 1)
		return
	}
	c.folded[h] = i
	r.Folded++
}

// Merge adds the counts of other (nil: none), keeping the order of first
// appearance: types new to c come after c's, in other's order.
func (c *TypeCounts) Merge(other *TypeCounts) {
	if other == nil {
		return
	}
	if other == c {
		for i := range c.rows {
			c.rows[i].Count *= 2
		}
		return
	}
	for _, r := range other.rows {
		if r.Folded == 0 {
			c.AddN(r.Proto, r.Type, r.Count)
			continue
		}
		i := c.otherRow(r.Proto)
		c.rows[i].Count += r.Count
		if r.FoldedAtLeast {
			c.rows[i].FoldedAtLeast = true
		}
	}
	for h, i := range other.folded {
		c.foldHash(h, c.otherRow(other.rows[i].Proto))
	}
	for _, i := range c.others {
		if r := &c.rows[i]; r.Folded == 0 { // other's types all past its hash bound
			r.Folded, r.FoldedAtLeast = 1, true
		}
	}
}

// Rows returns a copy of the counts, per protocol and type, in order of
// first appearance.
// c may be nil (no rows).
func (c *TypeCounts) Rows() []TypeCount {
	if c == nil {
		return nil
	}
	return slices.Clone(c.rows)
}

// Len is the number of distinct (protocol, type) pairs counted.
// c may be nil (none).
func (c *TypeCounts) Len() int {
	if c == nil {
		return 0
	}
	return len(c.rows)
}

// Total is the number of messages counted.
func (c *TypeCounts) Total() int64 {
	if c == nil {
		return 0
	}
	var n int64
	for _, r := range c.rows {
		n += r.Count
	}
	return n
}
