package parquetout

import (
	"fmt"
	"unsafe"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
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
// form); def and rep have one entry per level slot, and are left empty
// when the column's maximum level is 0.
type column struct {
	colSpec
	i64 []int64
	f32 []float32
	f64 []float64
	bl  []bool
	// physBytes: each value is data[pos[2i]:pos[2i+1]]. A value equal
	// to the column's previous one (the capture, the transport, a
	// stream's addresses: most rows) is not copied again.
	pos  []uint32
	data []byte
	def  []int16 // definition levels, when maxDef > 0
	rep  []int16 // repetition levels, when maxRep > 0
}

// batch is a row group being collected (or written) by a part.
type batch struct {
	cols  []column
	rows  int
	bytes int // of byte-array data, to bound a row group's memory
}

func newBatch(specs []colSpec) *batch {
	b := &batch{cols: make([]column, len(specs))}
	for i, s := range specs {
		b.cols[i].colSpec = s
	}
	return b
}

// reset empties b, keeping its memory for the next row group.
func (b *batch) reset() {
	for i := range b.cols {
		c := &b.cols[i]
		c.i64, c.f32, c.f64, c.bl = c.i64[:0], c.f32[:0], c.f64[:0], c.bl[:0]
		c.pos, c.data, c.def, c.rep = c.pos[:0], c.data[:0], c.def[:0], c.rep[:0]
	}
	b.rows, b.bytes = 0, 0
}

// levels appends a slot's levels to the column's level streams.
func (c *column) levels(def, rep int) {
	if c.maxDef > 0 {
		c.def = append(c.def, int16(def))
	}
	if c.maxRep > 0 {
		c.rep = append(c.rep, int16(rep))
	}
}

// null appends a slot without a value (def < maxDef).
func (b *batch) null(col, def, rep int) { b.cols[col].levels(def, rep) }

func (b *batch) int64(col int, v int64, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	c.i64 = append(c.i64, v)
}

func (b *batch) float32(col int, v float32, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	c.f32 = append(c.f32, v)
}

func (b *batch) float64(col int, v float64, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	c.f64 = append(c.f64, v)
}

func (b *batch) bool(col int, v bool, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	c.bl = append(c.bl, v)
}

// str appends a copy of s: the record's buffers are not ours.
func (b *batch) str(col int, s string, def, rep int) {
	c := &b.cols[col]
	c.levels(def, rep)
	if n := len(c.pos); n > 0 && string(c.data[c.pos[n-2]:c.pos[n-1]]) == s {
		c.pos = append(c.pos, c.pos[n-2], c.pos[n-1])
		return
	}
	start := len(c.data)
	c.data = append(c.data, s...)
	c.pos = append(c.pos, uint32(start), uint32(len(c.data)))
	b.bytes += len(s)
}

func (b *batch) raw(col int, p []byte, def, rep int) {
	b.str(col, unsafe.String(unsafe.SliceData(p), len(p)), def, rep) // s is only read
}

// write writes b as the next row group of fw, column by column in the
// schema's order. views is the writer's (or the worker's) scratch for
// byte arrays' views into a column's data, which arrow-go's writer
// takes: kept outside the batches, as a slice of pointers the garbage
// collector scans.
func (b *batch) write(fw *file.Writer, views *[]apq.ByteArray) error {
	rg := fw.AppendRowGroup()
	for i := range b.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		if err := b.cols[i].write(cw, views); err != nil {
			return fmt.Errorf("column %s: %w", cw.Descr().Path(), err)
		}
	}
	return rg.Close()
}

func (c *column) write(cw file.ColumnChunkWriter, views *[]apq.ByteArray) error {
	var def, rep []int16
	if c.maxDef > 0 {
		def = c.def
	}
	if c.maxRep > 0 {
		rep = c.rep
	}
	var err error
	switch w := cw.(type) {
	case *file.Int64ColumnChunkWriter:
		_, err = w.WriteBatch(c.i64, def, rep)
	case *file.Float32ColumnChunkWriter:
		_, err = w.WriteBatch(c.f32, def, rep)
	case *file.Float64ColumnChunkWriter:
		_, err = w.WriteBatch(c.f64, def, rep)
	case *file.BooleanColumnChunkWriter:
		_, err = w.WriteBatch(c.bl, def, rep)
	case *file.ByteArrayColumnChunkWriter:
		ba := (*views)[:0]
		for i := 0; i < len(c.pos); i += 2 {
			ba = append(ba, c.data[c.pos[i]:c.pos[i+1]:c.pos[i+1]])
		}
		*views = ba
		_, err = w.WriteBatch(ba, def, rep)
	default:
		err = fmt.Errorf("parquetout: no writer for %T", cw)
	}
	return err
}
