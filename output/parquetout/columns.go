package parquetout

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/dissect-tools/dissect/output"
	"github.com/parquet-go/parquet-go"
)

// Column buffers.
//
// A part collects a row group column by column: one [column] per leaf
// column of its plan, holding the values in their Parquet physical type
// (int64, float32, float64, bool, byte arrays) and, where the column has
// them, the definition and repetition levels. A record appends its
// values where they go and nothing else: no row is assembled, no map is
// consulted, and once the slices have grown to a row group's size no
// memory is allocated. A full batch is handed to a worker that expands it,
// a chunk of rows at a time, into the leveled values parquet-go's column
// writers take, which encode and compress them, while the decoder fills
// the part's other batch.

// physical is a leaf column's Parquet physical type.
type physical uint8

const (
	physInt64  physical = iota // INT64: int, uint, time
	physFloat                  // FLOAT: float32
	physDouble                 // DOUBLE: float64
	physBool                   // BOOLEAN
	physBytes                  // BYTE_ARRAY: string, bytes, object without keys
)

// colSpec is what a column buffer needs to know of its column.
type colSpec struct {
	phys           physical
	maxDef, maxRep int16
}

// column holds one leaf column's part of a row group. Values are only
// those of the rows whose definition level is maxDef (Parquet's dense
// form). Byte arrays and levels are kept as runs: most rows repeat the
// previous row's capture, transport, addresses and levels, so that a
// row group takes little more than its numbers' memory. They are
// expanded into a worker's scratch when the row group is written.
type column struct {
	colSpec
	i64  []int64
	f32  []float32
	f64  []float64
	bl   []bool
	str  []strRun // physBytes: the values, as runs of one value
	i64r []i64Run // physInt64 columns of values that repeat (stream, length)
	def  levels   // definition levels, when maxDef > 0
	rep  levels   // repetition levels, when maxRep > 0
	// data holds the byte arrays' bytes: a run is data[start:end].
	data []byte
}

// strRun is n values data[start:end].
type strRun struct{ start, end, n uint32 }

// i64Run is n values v.
type i64Run struct {
	v int64
	n uint32
}

// lvlRun is n levels of value v.
type lvlRun struct {
	v int16
	n uint32
}

// levels are a column's levels of one kind as runs, the last run kept
// apart so that a level like the previous one (most) is counted in place.
// done completes runs before they are read.
type levels struct {
	runs []lvlRun
	last lvlRun // n == 0: no level yet
}

// add appends level v.
func (l *levels) add(v int16) {
	if l.last.v == v { // also when there is no level yet: a run of one
		l.last.n++
		return
	}
	l.push(v)
}

func (l *levels) push(v int16) {
	if l.last.n > 0 {
		l.runs = append(l.runs, l.last)
	}
	l.last = lvlRun{v, 1}
}

// done moves the last run to runs.
func (l *levels) done() {
	if l.last.n > 0 {
		l.runs = append(l.runs, l.last)
	}
	l.last = lvlRun{}
}

func (l *levels) reset() { l.runs, l.last = l.runs[:0], lvlRun{} }

// batch is a row group being collected (or written) by a part.
type batch struct {
	cols []column
	rows int
	// size is about the memory the row group's values take: 8 bytes a
	// slot (a value or a null, at any depth of an array), and the bytes
	// of the strings copied. It bounds a row group of long arrays or
	// strings (maxBatchBytes).
	size int
}

func newBatch(specs []colSpec) *batch {
	b := &batch{cols: make([]column, len(specs))}
	for i, s := range specs {
		b.cols[i].colSpec = s
	}
	return b
}

// newBatchLike returns an empty batch for the columns of b, each slice
// made at the length b's has: the next row group of a part is usually
// as long, and needs no more than that (append's growth would leave up
// to a quarter unused).
func newBatchLike(b *batch) *batch {
	n := &batch{cols: make([]column, len(b.cols))}
	for i := range b.cols {
		c, o := &n.cols[i], &b.cols[i]
		c.colSpec = o.colSpec
		c.i64 = make([]int64, 0, len(o.i64))
		c.i64r = make([]i64Run, 0, len(o.i64r))
		c.f32 = make([]float32, 0, len(o.f32))
		c.f64 = make([]float64, 0, len(o.f64))
		c.bl = make([]bool, 0, len(o.bl))
		c.str = make([]strRun, 0, len(o.str))
		c.def.runs = make([]lvlRun, 0, len(o.def.runs))
		c.rep.runs = make([]lvlRun, 0, len(o.rep.runs))
		c.data = make([]byte, 0, len(o.data))
	}
	return n
}

// reset empties b, keeping its memory for the next row group.
func (b *batch) reset() {
	for i := range b.cols {
		c := &b.cols[i]
		c.i64, c.f32, c.f64, c.bl, c.i64r = c.i64[:0], c.f32[:0], c.f64[:0], c.bl[:0], c.i64r[:0]
		c.str, c.data = c.str[:0], c.data[:0]
		c.def.reset()
		c.rep.reset()
	}
	b.rows, b.size = 0, 0
}

// levels appends a slot's levels to the column's level streams.
func (c *column) levels(def, rep int) {
	if c.maxDef > 0 {
		c.def.add(int16(def))
	}
	if c.maxRep > 0 {
		c.rep.add(int16(rep))
	}
}

// null appends a slot without a value (def < maxDef).
func (b *batch) null(col, def, rep int) {
	b.cols[col].levels(def, rep)
	b.size += 8
}

func (b *batch) int64(col int, v int64, def, rep int) {
	c := &b.cols[col]
	b.size += 8
	c.levels(def, rep)
	c.i64 = append(c.i64, v)
}

// int64Run appends v, a required column's, to the column's runs: for
// the common columns whose values repeat (a stream's messages come in
// bursts, lengths are a type's size), which then take no memory per row.
func (b *batch) int64Run(col int, v int64) {
	c := &b.cols[col]
	if n := len(c.i64r); n > 0 && c.i64r[n-1].v == v {
		c.i64r[n-1].n++
		return
	}
	c.i64r = append(c.i64r, i64Run{v, 1})
}

func (b *batch) float32(col int, v float32, def, rep int) {
	c := &b.cols[col]
	b.size += 8
	c.levels(def, rep)
	c.f32 = append(c.f32, v)
}

func (b *batch) float64(col int, v float64, def, rep int) {
	c := &b.cols[col]
	b.size += 8
	c.levels(def, rep)
	c.f64 = append(c.f64, v)
}

func (b *batch) bool(col int, v bool, def, rep int) {
	c := &b.cols[col]
	b.size += 8
	c.levels(def, rep)
	c.bl = append(c.bl, v)
}

// str appends a copy of s, as valid UTF-8: the record's buffers are not
// ours.
func (b *batch) str(col int, s string, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	b.size += 8
	b.size += c.addStr(s)
}

// addStr appends a copy of s to the column's runs, invalid UTF-8 made
// valid as JSON makes it ([output.ValidUTF8]): readers (DuckDB) refuse a
// string column that is not. It returns the bytes copied. A value equal
// to the previous one (most: a capture, a stream's addresses) is
// counted in its run without looking at its UTF-8 again, since the run's
// value is valid.
func (c *column) addStr(s string) int {
	if c.repeat(s) {
		return 0
	}
	return c.addBytes(output.ValidUTF8(s))
}

// addBytes appends a copy of s, bytes as they are (BYTE_ARRAY columns
// of bytes, extra_json written valid), and returns the bytes copied.
func (c *column) addBytes(s string) int {
	if c.repeat(s) {
		return 0
	}
	start := len(c.data)
	c.data = append(c.data, s...)
	c.str = append(c.str, strRun{uint32(start), uint32(len(c.data)), 1})
	return len(s)
}

// repeat counts s in the last run if it holds s.
func (c *column) repeat(s string) bool {
	n := len(c.str)
	if n == 0 || string(c.data[c.str[n-1].start:c.str[n-1].end]) != s {
		return false
	}
	c.str[n-1].n++
	return true
}

// raw appends a copy of p as it is.
func (b *batch) raw(col int, p []byte, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	b.size += 8
	b.size += c.addBytes(unsafe.String(unsafe.SliceData(p), len(p))) // only read
}

// scratch is a writer's (or a worker's) memory for expanding a column's
// values and runs into the leveled values parquet-go's column writers
// take: kept outside the batches, so that there is one per goroutine
// that writes.
type scratch struct {
	vals []parquet.Value
}

// write writes b as the next row group of pw, column by column in the
// schema's order.
func (b *batch) write(pw *parquet.Writer, s *scratch) error {
	cws := pw.ColumnWriters()
	for i := range b.cols {
		if err := b.cols[i].write(cws[i], s, i); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return pw.Flush()
}

// chunkSlots is about how many of a column's slots are expanded into
// the scratch at a time (a value is 24 bytes there): a chunk ends at a
// row's end, as a column writer takes whole rows.
const chunkSlots = 4096

// cursor walks a column's slots: its runs of levels, its typed values
// and its runs of values (strings, repeated int64s).
type cursor struct {
	def, rep runCursor
	vi       int       // the next of the typed values
	vc       valCursor // the next of the runs of values
}

// write writes the column's slots, with their levels, as the row
// group's column chunk (col, its index in the schema).
func (c *column) write(cw *parquet.ColumnWriter, s *scratch, col int) error {
	var cur cursor
	c.def.done()
	c.rep.done()
	for {
		s.vals = c.appendSlots(s.vals[:0], &cur, col)
		if len(s.vals) == 0 {
			return nil
		}
		if _, err := cw.WriteRowValues(s.vals); err != nil {
			return err
		}
	}
}

// appendSlots appends to dst the next slots of the column from cur,
// about chunkSlots of them, ending where a row ends.
func (c *column) appendSlots(dst []parquet.Value, cur *cursor, col int) []parquet.Value {
	switch {
	case c.maxRep > 0:
		return c.appendRepeated(dst, cur, col)
	case c.maxDef == 0: // required: a slot is a value
		return c.appendValues(dst, cur, chunkSlots, 0, col)
	}
	for len(dst) < chunkSlots && cur.def.i < len(c.def.runs) {
		r := c.def.runs[cur.def.i]
		n := min(r.n-cur.def.used, uint32(chunkSlots-len(dst)))
		if r.v == c.maxDef {
			dst = c.appendValues(dst, cur, int(n), int(r.v), col)
		} else {
			dst = appendNulls(dst, int(n), 0, int(r.v), col)
		}
		if cur.def.used += n; cur.def.used == r.n {
			cur.def.i, cur.def.used = cur.def.i+1, 0
		}
	}
	return dst
}

// appendNulls appends n nulls with levels rep and def.
func appendNulls(dst []parquet.Value, n, rep, def, col int) []parquet.Value {
	var v parquet.Value
	v.SetRepetitionLevel(rep)
	v.SetDefinitionLevel(def)
	v.SetColumnIndex(col)
	return fill(dst, v, n)
}

// appendRepeated appends the slots of a column with repetition until
// about chunkSlots and a row's end: one at a time, but for runs of rows
// of one null slot (a list absent, as most rows' warnings are), which
// are appended a run at a time.
func (c *column) appendRepeated(dst []parquet.Value, cur *cursor, col int) []parquet.Value {
	defs, reps := c.def.runs, c.rep.runs
	for {
		r, ok := cur.rep.peek(reps)
		if !ok || r == 0 && len(dst) >= chunkSlots {
			return dst
		}
		if d := defs[cur.def.i]; r == 0 && d.v < c.maxDef {
			n := min(d.n-cur.def.used, reps[cur.rep.i].n-cur.rep.used, uint32(max(1, chunkSlots-len(dst))))
			dst = appendNulls(dst, int(n), 0, int(d.v), col)
			cur.def.skip(defs, n)
			cur.rep.skip(reps, n)
			continue
		}
		def, _ := cur.def.next(defs)
		rep, _ := cur.rep.next(reps)
		if def == c.maxDef {
			dst = c.appendValues(dst, cur, 1, int(def), col)
			dst[len(dst)-1].SetRepetitionLevel(int(rep))
		} else {
			dst = appendNulls(dst, 1, int(rep), int(def), col)
		}
	}
}

// appendValues appends the column's next n values (fewer if it has
// fewer) at definition level def (repetition level 0).
func (c *column) appendValues(dst []parquet.Value, cur *cursor, n, def, col int) []parquet.Value {
	switch c.phys {
	case physInt64:
		if len(c.i64r) > 0 {
			return appendRuns(dst, c.i64r, &cur.vc, n, func(r i64Run) (parquet.Value, uint32) { return parquet.Int64Value(r.v), r.n }, def, col)
		}
	case physBytes: // runs of one value
		return appendRuns(dst, c.str, &cur.vc, n, func(r strRun) (parquet.Value, uint32) {
			return parquet.ByteArrayValue(c.data[r.start:r.end:r.end]), r.n
		}, def, col)
	}
	// A column has values in one typed slice only, by its type.
	end := min(cur.vi+n, len(c.i64)+len(c.f32)+len(c.f64)+len(c.bl))
	start := len(dst)
	dst = slices.Grow(dst, end-cur.vi)[:start+end-cur.vi]
	out := dst[start:]
	switch c.phys {
	case physInt64:
		for i, x := range c.i64[cur.vi:end] {
			out[i] = parquet.Int64Value(x)
		}
	case physFloat:
		for i, x := range c.f32[cur.vi:end] {
			out[i] = parquet.FloatValue(x)
		}
	case physDouble:
		for i, x := range c.f64[cur.vi:end] {
			out[i] = parquet.DoubleValue(x)
		}
	case physBool:
		for i, x := range c.bl[cur.vi:end] {
			out[i] = parquet.BooleanValue(x)
		}
	}
	cur.vi = end
	setLevels(out, def, col)
	return dst
}

// setLevels puts the values vs at definition level def of column col
// (repetition level 0).
func setLevels(vs []parquet.Value, def, col int) {
	for i := range vs {
		vs[i].SetDefinitionLevel(def)
		vs[i].SetColumnIndex(col)
	}
}

// fill appends n copies of v.
func fill(dst []parquet.Value, v parquet.Value, n int) []parquet.Value {
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	for i := range out {
		out[i] = v
	}
	return dst
}

// appendRuns appends the next n values of runs (fewer if they hold
// fewer) from vc on, each run's value and count given by mk, at
// definition level def.
func appendRuns[R any](dst []parquet.Value, runs []R, vc *valCursor, n int, mk func(R) (parquet.Value, uint32), def, col int) []parquet.Value {
	for ; n > 0 && vc.i < len(runs); vc.i, vc.used = vc.i+1, 0 {
		v, rn := mk(runs[vc.i])
		k := min(rn-vc.used, uint32(n))
		v.SetDefinitionLevel(def)
		v.SetColumnIndex(col)
		dst = fill(dst, v, int(k))
		n -= int(k)
		if vc.used += k; vc.used < rn {
			break
		}
	}
	return dst
}

// runCursor walks a column's runs of levels.
type runCursor struct {
	i    int    // the run
	used uint32 // of its levels, already taken
}

// peek returns the next level of runs.
func (rc *runCursor) peek(runs []lvlRun) (int16, bool) {
	if rc.i >= len(runs) {
		return 0, false
	}
	return runs[rc.i].v, true
}

// skip moves past the next n levels of runs, all of the current run.
func (rc *runCursor) skip(runs []lvlRun, n uint32) {
	if rc.used += n; rc.used == runs[rc.i].n {
		rc.i, rc.used = rc.i+1, 0
	}
}

// next returns the next level of runs and moves past it.
func (rc *runCursor) next(runs []lvlRun) (int16, bool) {
	if rc.i >= len(runs) {
		return 0, false
	}
	v := runs[rc.i].v
	if rc.used++; rc.used == runs[rc.i].n {
		rc.i, rc.used = rc.i+1, 0
	}
	return v, true
}

// valCursor is where a column's value runs (strings, repeated int64s)
// have been taken up to.
type valCursor struct {
	i    int    // the run
	used uint32 // of its values, already taken
}
