package parquetout

import (
	"errors"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Dictionary columns.
//
// The common string columns (capture, transport, src, dst, record_type)
// repeat a handful of values in runs. Written plain, every value is
// copied into the page, compared for the statistics and compressed
// again; written as a dictionary straight from the runs, a column chunk
// is its few distinct values once (the dictionary page) and an index a
// row, which the page's RLE encoding turns into a few bytes per run.
// The values read back are the same; only the encoding differs.
//
// arrow-go's dictionary encoder would hash every value (and allocate);
// instead the dictionary is made here from the runs and handed over
// whole (PutDictionary), then the indices (WriteDictIndices). The page
// statistics, which WriteDictIndices leaves alone, are updated from the
// distinct values of each batch of indices before it is written: a
// page is only cut after a batch, so each page's statistics are those
// of its values.

// dictColumns are the columns written as dictionaries when a column
// chunk has few distinct values: the required string columns.
var dictColumns = []string{"capture", "transport", "src", "dst", typeColumn}

// maxDictEntries and maxDictBytes bound a column chunk's dictionary;
// beyond them (a column of many different values) the chunk is written
// plain.
const (
	maxDictEntries = 256
	maxDictBytes   = 64 << 10
)

// dictEncoder is the part of arrow-go's dictionary encoder (an internal
// type) used here.
type dictEncoder interface {
	PutDictionary(arrow.Array) error
	NumEntries() int
}

// dictScratch is a writer's memory for the dictionary path.
type dictScratch struct {
	ids    map[string]int32 // value → index; keys alias the batch's data
	vals   []apq.ByteArray  // the dictionary, by index
	runIdx []int32          // each run's index
	idx    []int32          // a batch's indices
	seen   []uint32         // per index: the last batch that has it
	gen    uint32
	stats  []apq.ByteArray // a batch's distinct values
}

var errDictEntries = errors.New("parquetout: dictionary entries lost")

// writeDict writes c, a required column without repetition, as a
// dictionary-encoded column chunk if it fits the bounds; it returns
// false, having written nothing, if not.
func (c *column) writeDict(w *file.ByteArrayColumnChunkWriter, s *dictScratch) (bool, error) {
	enc, ok := w.CurrentEncoder().(dictEncoder)
	if !ok || w.CurrentEncoder().Encoding() != apq.Encodings.PlainDict {
		return false, nil
	}
	if s.ids == nil {
		s.ids = make(map[string]int32)
	}
	// The map's keys alias c.data: emptied before c is given back.
	defer clear(s.ids)
	s.vals, s.runIdx = s.vals[:0], s.runIdx[:0]
	size := 0
	for _, r := range c.str {
		v := c.data[r.start:r.end:r.end]
		id, ok := s.ids[unsafe.String(unsafe.SliceData(v), len(v))]
		if !ok {
			if len(s.vals) == maxDictEntries || size+len(v) > maxDictBytes {
				return false, nil
			}
			id = int32(len(s.vals))
			s.ids[unsafe.String(unsafe.SliceData(v), len(v))] = id
			s.vals = append(s.vals, v)
			size += len(v)
		}
		s.runIdx = append(s.runIdx, id)
	}
	dict := binaryArray(s.vals)
	err := enc.PutDictionary(dict)
	dict.Release()
	if err != nil {
		return false, err
	}
	if enc.NumEntries() != len(s.vals) {
		return false, errDictEntries
	}
	if cap(s.seen) < len(s.vals) {
		s.seen = make([]uint32, maxDictEntries)
	}
	batch := int(w.Properties().WriteBatchSize())
	var vc valCursor
	for rest := c.values(); rest > 0; {
		n := min(rest, batch)
		if s.gen++; s.gen == 0 { // wrapped: no mark may look current
			clear(s.seen)
			s.gen = 1
		}
		s.idx, s.stats = s.idx[:0], s.stats[:0]
		for k := n; k > 0; {
			r := c.str[vc.i]
			id := s.runIdx[vc.i]
			m := min(r.n-vc.used, uint32(k))
			for range m {
				s.idx = append(s.idx, id)
			}
			if s.seen[id] != s.gen {
				s.seen[id] = s.gen
				s.stats = append(s.stats, s.vals[id])
			}
			vc.used += m
			k -= int(m)
			if vc.used == r.n {
				vc.i, vc.used = vc.i+1, 0
			}
		}
		if st, ok := w.PageStatistics().(*metadata.ByteArrayStatistics); ok {
			st.Update(s.stats, 0)
			st.IncNumValues(int64(n - len(s.stats)))
		}
		idx := int32Array(s.idx)
		err := w.WriteDictIndices(idx, nil, nil)
		idx.Release()
		if err != nil {
			return true, err
		}
		rest -= n
	}
	return true, nil
}

// binaryArray returns vals as an arrow array, in memory of its own: the
// encoder keeps it (PreservedDictionary) until the column chunk is done.
func binaryArray(vals []apq.ByteArray) arrow.Array {
	offsets := make([]int32, 1, len(vals)+1)
	var data []byte
	for _, v := range vals {
		data = append(data, v...)
		offsets = append(offsets, int32(len(data)))
	}
	d := array.NewData(arrow.BinaryTypes.Binary, len(vals), []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.NewBinaryData(d)
}

// int32Array returns idx as an arrow array over idx's memory.
func int32Array(idx []int32) arrow.Array {
	d := array.NewData(arrow.PrimitiveTypes.Int32, len(idx),
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))}, nil, 0, 0)
	defer d.Release()
	return array.NewInt32Data(d)
}
