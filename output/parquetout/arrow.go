package parquetout

import (
	"fmt"
	"strings"
	"sync"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// The files are written with arrow-go's typed column writers
// (github.com/apache/arrow-go/v18/parquet/file), which take a column's
// values with their levels as plain slices. The schema is still described
// once, as a parquet-go schema (schema.go: nodeOf), and translated here
// node by node; every leaf column's path, levels and physical type are
// then checked against the plan's, so that a difference between the two
// fails the writer instead of writing a file readers misread.

// arrowSchema returns s as arrow-go's schema, with each leaf column's
// colSpec in column order.
func arrowSchema(s *parquet.Schema) (*schema.GroupNode, []colSpec, error) {
	var fl schema.FieldList
	for _, f := range s.Fields() {
		n, err := arrowNode(f.Name(), f)
		if err != nil {
			return nil, nil, err
		}
		fl = append(fl, n)
	}
	root, err := schema.NewGroupNode(s.Name(), apq.Repetitions.Required, fl, -1)
	if err != nil {
		return nil, nil, err
	}
	sc := schema.NewSchema(root)
	paths := s.Columns()
	if sc.NumColumns() != len(paths) {
		return nil, nil, fmt.Errorf("parquetout: %d columns in the file schema, %d planned", sc.NumColumns(), len(paths))
	}
	specs := make([]colSpec, len(paths))
	for i, path := range paths {
		c := sc.Column(i)
		lc, _ := s.Lookup(path...)
		if c.Path() != strings.Join(path, ".") || int(c.MaxDefinitionLevel()) != lc.MaxDefinitionLevel ||
			int(c.MaxRepetitionLevel()) != lc.MaxRepetitionLevel {
			return nil, nil, fmt.Errorf("parquetout: column %d is %s (levels %d, %d), planned %s (%d, %d)", i,
				c.Path(), c.MaxDefinitionLevel(), c.MaxRepetitionLevel(), strings.Join(path, "."), lc.MaxDefinitionLevel, lc.MaxRepetitionLevel)
		}
		specs[i] = colSpec{maxDef: c.MaxDefinitionLevel(), maxRep: c.MaxRepetitionLevel()}
		switch c.PhysicalType() {
		case apq.Types.Int64:
			specs[i].phys = physInt64
		case apq.Types.Float:
			specs[i].phys = physFloat
		case apq.Types.Double:
			specs[i].phys = physDouble
		case apq.Types.Boolean:
			specs[i].phys = physBool
		case apq.Types.ByteArray:
			specs[i].phys = physBytes
		default:
			return nil, nil, fmt.Errorf("parquetout: column %s: physical type %s", c.Path(), c.PhysicalType())
		}
	}
	return root, specs, nil
}

// arrowNode translates one node of the kinds nodeOf makes.
func arrowNode(name string, n parquet.Node) (schema.Node, error) {
	rep := apq.Repetitions.Required
	switch {
	case n.Optional():
		rep = apq.Repetitions.Optional
	case n.Repeated():
		rep = apq.Repetitions.Repeated
	}
	var lt format.LogicalTypeValue
	if l := n.Type().LogicalType(); l != nil {
		lt = l.Value
	}
	if !n.Leaf() {
		var fl schema.FieldList
		for _, f := range n.Fields() {
			c, err := arrowNode(f.Name(), f)
			if err != nil {
				return nil, err
			}
			fl = append(fl, c)
		}
		switch lt.(type) {
		case nil:
			return schema.NewGroupNode(name, rep, fl, -1)
		case *format.ListType:
			return schema.NewGroupNodeLogical(name, rep, fl, schema.ListLogicalType{}, -1)
		}
		return nil, fmt.Errorf("parquetout: group %s: logical type %s", name, lt)
	}
	var logical schema.LogicalType = schema.NoLogicalType{}
	var phys apq.Type
	switch n.Type().Kind() {
	case parquet.Int64:
		phys = apq.Types.Int64
		switch t := lt.(type) {
		case nil:
		case *format.IntType:
			logical = schema.NewIntLogicalType(t.BitWidth, t.IsSigned)
		case *format.TimestampType:
			if _, ok := t.Unit.Value.(*format.NanoSeconds); !ok {
				return nil, fmt.Errorf("parquetout: column %s: time unit %s", name, &t.Unit)
			}
			logical = schema.NewTimestampLogicalType(t.IsAdjustedToUTC, schema.TimeUnitNanos)
		default:
			return nil, fmt.Errorf("parquetout: column %s: logical type %s", name, lt)
		}
	case parquet.Float:
		phys = apq.Types.Float
	case parquet.Double:
		phys = apq.Types.Double
	case parquet.Boolean:
		phys = apq.Types.Boolean
	case parquet.ByteArray:
		phys = apq.Types.ByteArray
		switch lt.(type) {
		case nil:
		case *format.StringType:
			logical = schema.StringLogicalType{}
		default:
			return nil, fmt.Errorf("parquetout: column %s: logical type %s", name, lt)
		}
	default:
		return nil, fmt.Errorf("parquetout: column %s: type %s", name, n.Type())
	}
	if _, ok := logical.(schema.NoLogicalType); !ok {
		return schema.NewPrimitiveNodeLogical(name, rep, logical, phys, -1, -1)
	}
	return schema.NewPrimitiveNode(name, rep, phys, -1, -1)
}

// zstdLevel is the zstd level of the pages: 1, zstd's fastest. On the
// 50 MB Deltarobot capture it gave files within 2% of the size of the
// default level's in about half the compression time (docs/performance.md).
const zstdLevel = 1

// dataPageSize bounds a data page. The writer's buffers are a page's
// size, and made anew for each column chunk: pages of 64 KiB instead of
// the library's 1 MiB keep them out of the row groups' size.
const dataPageSize = 64 << 10

// writerProps are the files' properties: zstd, statistics for readers'
// filters, DELTA_BINARY_PACKED for the common INT64 columns (times and
// offsets that grow, streams and lengths that repeat: on the 50 MB
// Deltarobot capture a lake of 15 MB instead of 18 MB, in the same
// time), plain encodings otherwise (arrow-go's dictionaries took more
// time, and an allocation per value, for no smaller files).
func writerProps(createdBy string) *apq.WriterProperties {
	if createdBy == "" {
		createdBy = "dissect"
	}
	props := []apq.WriterProperty{
		apq.WithCompression(compress.Codecs.Zstd),
		apq.WithCompressionLevel(zstdLevel),
		apq.WithDictionaryDefault(false),
		apq.WithStats(true),
		apq.WithDataPageSize(dataPageSize),
		apq.WithCreatedBy(createdBy),
	}
	for _, c := range []string{"time", "stream", "offset", "length"} {
		props = append(props, apq.WithEncodingFor(c, apq.Encodings.DeltaBinaryPacked))
	}
	return apq.NewWriterProperties(props...)
}

// pageZstd is arrow-go's zstd codec with encoders sized for data pages.
// arrow-go's own encoders keep zstd's default 8 MiB window, a history
// buffer of that size per encoder (16 MiB with two workers, made anew
// whenever the garbage collector empties its pool), where a page is at
// most a few times dataPageSize. Encoders with a window of 4 pages and
// zstd's low-memory mode compress the same pages into the same format
// (any zstd decoder reads them; the window is a limit on how far back a
// match may point) with a 512 KiB history each.
//
// It is registered, arrow-go's intended way of choosing a codec's
// implementation, in init: decoding and streaming are arrow-go's.
type pageZstd struct {
	compress.Codec // arrow-go's, for decoding
	encoders       sync.Pool
}

// pageWindow is the encoders' window: 4 data pages.
const pageWindow = 4 * dataPageSize

func init() {
	orig, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err) // arrow-go registers zstd in its own init
	}
	c := &pageZstd{Codec: orig}
	c.encoders.New = func() any {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(zstdLevel)),
			zstd.WithWindowSize(pageWindow), zstd.WithLowerEncoderMem(true), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true), zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			panic(err) // the options are constants
		}
		return enc
	}
	compress.RegisterCodec(compress.Codecs.Zstd, c)
}

func (c *pageZstd) Encode(dst, src []byte) []byte { return c.EncodeLevel(dst, src, zstdLevel) }

// EncodeLevel compresses src with the page encoders at zstdLevel, the
// writer's, and with arrow-go's at any other.
func (c *pageZstd) EncodeLevel(dst, src []byte, level int) []byte {
	if level != zstdLevel {
		return c.Codec.EncodeLevel(dst, src, level)
	}
	enc := c.encoders.Get().(*zstd.Encoder)
	dst = enc.EncodeAll(src, dst[:0])
	c.encoders.Put(enc)
	return dst
}

// DecodeWithError is arrow-go's (compress.ErrorCodec).
func (c *pageZstd) DecodeWithError(dst, src []byte) ([]byte, error) {
	return compress.Decode(c.Codec, dst, src)
}
