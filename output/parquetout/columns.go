package parquetout

import (
	"fmt"
	"unsafe"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dissect-tools/dissect/output"
)

// Column buffers.
//
// A part collects a row group column by column: one [column] per leaf
// column of its plan, holding the values in their Parquet physical type
// (int64, float32, float64, bool, byte arrays) and, where the column has
// them, the definition and repetition levels. A record appends its
// values where they go and nothing else: no row is assembled, no map is
// consulted, and once the slices have grown to a row group's size no
// memory is allocated. A full batch is handed to a worker that encodes
// and compresses it (arrow-go's typed column writers take exactly these
// slices), while the decoder fills the part's other batch.

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
	def  []lvlRun // definition levels, when maxDef > 0
	rep  []lvlRun // repetition levels, when maxRep > 0
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
		c.def = make([]lvlRun, 0, len(o.def))
		c.rep = make([]lvlRun, 0, len(o.rep))
		c.data = make([]byte, 0, len(o.data))
	}
	return n
}

// reset empties b, keeping its memory for the next row group.
func (b *batch) reset() {
	for i := range b.cols {
		c := &b.cols[i]
		c.i64, c.f32, c.f64, c.bl, c.i64r = c.i64[:0], c.f32[:0], c.f64[:0], c.bl[:0], c.i64r[:0]
		c.str, c.data, c.def, c.rep = c.str[:0], c.data[:0], c.def[:0], c.rep[:0]
	}
	b.rows, b.size = 0, 0
}

// levels appends a slot's levels to the column's level streams.
func (c *column) levels(def, rep int) {
	if c.maxDef > 0 {
		addLevel(&c.def, int16(def))
	}
	if c.maxRep > 0 {
		addLevel(&c.rep, int16(rep))
	}
}

// addLevel appends level v to *runs, in place: storing the slice back
// only when it grows spares the write barrier of a slice store per
// value.
func addLevel(runs *[]lvlRun, v int16) {
	if n := len(*runs); n > 0 && (*runs)[n-1].v == v {
		(*runs)[n-1].n++
		return
	}
	*runs = append(*runs, lvlRun{v, 1})
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
// string column that is not. It returns the bytes copied.
func (c *column) addStr(s string) int { return c.addBytes(output.ValidUTF8(s)) }

// addBytes appends a copy of s, bytes as they are (BYTE_ARRAY columns
// of bytes, extra_json written valid), and returns the bytes copied.
func (c *column) addBytes(s string) int {
	if n := len(c.str); n > 0 && string(c.data[c.str[n-1].start:c.str[n-1].end]) == s {
		c.str[n-1].n++
		return 0
	}
	start := len(c.data)
	c.data = append(c.data, s...)
	c.str = append(c.str, strRun{uint32(start), uint32(len(c.data)), 1})
	return len(s)
}

// raw appends a copy of p as it is.
func (b *batch) raw(col int, p []byte, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	b.size += 8
	b.size += c.addBytes(unsafe.String(unsafe.SliceData(p), len(p))) // only read
}

// scratch is a writer's (or a worker's) memory for expanding a column's
// runs into the slices arrow-go's writer takes: kept outside the
// batches, so that there is one per goroutine that writes.
type scratch struct {
	views    []apq.ByteArray
	i64      []int64
	def, rep []int16
	defRuns  []lvlRun
	dict     dictScratch
}

// write writes b as the next row group of fw, column by column in the
// schema's order.
func (b *batch) write(fw *file.Writer, s *scratch) error {
	rg := fw.AppendRowGroup()
	for i := range b.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := b.cols[i].write(cw, s, b.rows); err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Path(), err)
		}
	}
	return rg.Close()
}

func expand(dst []int16, runs []lvlRun) []int16 {
	dst = dst[:0]
	for _, r := range runs {
		for range r.n {
			dst = append(dst, r.v)
		}
	}
	return dst
}

// chunkSlots is how many slots of a column without repetition are
// expanded into the scratch at a time: arrow-go's writer takes a column
// chunk in any number of WriteBatch calls, so the scratch needs only a
// chunk of the row group (its byte-array views are 24 bytes a value).
const chunkSlots = 4096

// write writes the column's values and levels as the row group's column
// chunk; rows is the row group's rows.
func (c *column) write(cw file.ColumnChunkWriter, s *scratch, rows int) error {
	if w, ok := cw.(*file.ByteArrayColumnChunkWriter); ok && w.CurrentEncoder().Encoding() == apq.Encodings.PlainDict {
		// A dictionary column (dictColumns): as a dictionary if its
		// distinct values are few, plain otherwise.
		if c.maxDef == 0 && c.maxRep == 0 {
			done, err := c.writeDict(w, &s.dict)
			if done || err != nil {
				return err
			}
		}
		w.FallbackToPlain() // nothing written yet: the dictionary is dropped
	}
	if c.maxRep > 0 {
		return c.writeSlots(cw, s, c.def, c.rep, &valCursor{}, 0, c.values())
	}
	// Without repetition a slot is a row: chunks of chunkSlots rows,
	// each with the values of its slots at maxDef.
	var defs runCursor
	var vc valCursor
	vi := 0
	for done := 0; done < rows; {
		n := min(chunkSlots, rows-done)
		var def []lvlRun
		nv := n
		if c.maxDef > 0 {
			def = defs.take(c.def, n, &s.defRuns)
			nv = 0
			for _, r := range def {
				if r.v == c.maxDef {
					nv += int(r.n)
				}
			}
		}
		if err := c.writeSlots(cw, s, def, nil, &vc, vi, nv); err != nil {
			return err
		}
		done += n
		vi += nv
	}
	return nil
}

// runCursor walks a column's runs of levels a chunk at a time.
type runCursor struct {
	i    int    // the run
	used uint32 // of its levels, already taken
}

// take returns the next n levels of runs as runs (in *buf).
func (rc *runCursor) take(runs []lvlRun, n int, buf *[]lvlRun) []lvlRun {
	out := (*buf)[:0]
	for n > 0 && rc.i < len(runs) {
		r := runs[rc.i]
		k := min(uint32(n), r.n-rc.used)
		out = append(out, lvlRun{r.v, k})
		rc.used += k
		n -= int(k)
		if rc.used == r.n {
			rc.i, rc.used = rc.i+1, 0
		}
	}
	*buf = out
	return out
}

// values returns the number of the column's values.
func (c *column) values() int {
	n := len(c.i64) + len(c.f32) + len(c.f64) + len(c.bl)
	for _, r := range c.i64r {
		n += int(r.n)
	}
	for _, r := range c.str {
		n += int(r.n)
	}
	return n
}

// writeSlots writes the slots with levels def and rep (runs; nil for a
// column without them) and their nv values: of the typed slices those
// from vi, of the runs those from vc.
func (c *column) writeSlots(cw file.ColumnChunkWriter, s *scratch, defRuns, repRuns []lvlRun, vc *valCursor, vi, nv int) error {
	var def, rep []int16
	if c.maxDef > 0 {
		s.def = expand(s.def, defRuns)
		def = s.def
	}
	if c.maxRep > 0 {
		s.rep = expand(s.rep, repRuns)
		rep = s.rep
	}
	var err error
	switch w := cw.(type) {
	case *file.Int64ColumnChunkWriter:
		var vs []int64
		if len(c.i64r) > 0 {
			vs = expandI64(s.i64[:0], c.i64r, vc, nv)
			s.i64 = vs
		} else {
			vs = c.i64[vi : vi+nv]
		}
		_, err = w.WriteBatch(vs, def, rep)
	case *file.Float32ColumnChunkWriter:
		_, err = w.WriteBatch(c.f32[vi:vi+nv], def, rep)
	case *file.Float64ColumnChunkWriter:
		_, err = w.WriteBatch(c.f64[vi:vi+nv], def, rep)
	case *file.BooleanColumnChunkWriter:
		_, err = w.WriteBatch(c.bl[vi:vi+nv], def, rep)
	case *file.ByteArrayColumnChunkWriter:
		s.views = c.views(s.views[:0], vc, nv)
		_, err = w.WriteBatch(s.views, def, rep)
	default:
		err = fmt.Errorf("parquetout: no writer for %T", cw)
	}
	return err
}

// valCursor is where a column's value runs (strings, repeated int64s)
// have been taken up to.
type valCursor struct {
	i    int    // the run
	used uint32 // of its values, already taken
}

// expandI64 appends the next nv values of runs to dst.
func expandI64(dst []int64, runs []i64Run, vc *valCursor, nv int) []int64 {
	for nv > 0 && vc.i < len(runs) {
		r := runs[vc.i]
		k := min(r.n-vc.used, uint32(nv))
		for range k {
			dst = append(dst, r.v)
		}
		vc.used += k
		nv -= int(k)
		if vc.used == r.n {
			vc.i, vc.used = vc.i+1, 0
		}
	}
	return dst
}

// views appends the column's next nv byte arrays to dst.
func (c *column) views(dst []apq.ByteArray, vc *valCursor, nv int) []apq.ByteArray {
	for nv > 0 && vc.i < len(c.str) {
		r := c.str[vc.i]
		v := c.data[r.start:r.end:r.end]
		k := min(r.n-vc.used, uint32(nv))
		for range k {
			dst = append(dst, v)
		}
		vc.used += k
		nv -= int(k)
		if vc.used == r.n {
			vc.i, vc.used = vc.i+1, 0
		}
	}
	return dst
}
