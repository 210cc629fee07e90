package parquetout

import (
	"fmt"
	"strings"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// The files are written with parquet-go's column writers
// (github.com/parquet-go/parquet-go), from a schema built in the
// declared order (schema.go).

// Compressions are the page codecs a lake may be written with
// (Options.Compression), the first the default. Measured on the 50 MB
// Deltarobot capture (docs/performance-35-cpu.md): snappy, what DuckDB, Spark
// and pyarrow write by default, the least CPU of the three codecs (12.8
// MB); zstd (its default level, 3) the smallest lake, 26% smaller, for
// about 30% more of the run's CPU; gzip between the two; none about 4.4
// times snappy's lake, for 6% less CPU. Every reader of the lake (DuckDB, Spark, pyarrow,
// Polars) reads all four.
var Compressions = []string{"snappy", "zstd", "gzip", "none"}

// codecOf returns a new codec named c ("" for the default): each writer
// has its own (a zstd codec keeps its encoders), and no codec of the
// library's registry is replaced.
func codecOf(c string) (compress.Codec, error) {
	switch c {
	case "", "snappy":
		return new(fastSnappy), nil
	case "zstd":
		return &zstd.Codec{Level: zstd.DefaultLevel}, nil
	case "gzip":
		return &gzip.Codec{Level: gzip.DefaultCompression}, nil
	case "none":
		return new(parquet.Uncompressed), nil
	}
	return nil, fmt.Errorf("compression %q: want one of %s", c, strings.Join(Compressions, ", "))
}

// fastSnappy writes snappy blocks with s2's fastest snappy encoder
// instead of the "better" one parquet-go's codec calls: the same format,
// which every reader decodes (DuckDB in the tests). On the 50 MB
// Deltarobot capture (docs/performance-35-cpu.md) it takes less CPU and about
// 15 MB less memory (the "better" encoder takes 576 KiB of hash tables a
// page, from a pool that each garbage collection empties), for a lake
// 10% larger with the same pages, which larger pages (dataPageSize) win
// back.
type fastSnappy struct{ snappy.Codec }

func (*fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	if s2.MaxEncodedLen(len(src)) < 0 {
		return dst[:0], s2.ErrTooLarge
	}
	return s2.EncodeSnappy(dst, src), nil
}

// ValidCompression says whether c names a codec of Compressions.
func ValidCompression(c string) error {
	_, err := codecOf(c)
	return err
}

// dataPageSize bounds a data page's buffer (values and levels before
// encoding), which each column writer of an open part holds. On the 50
// MB Deltarobot capture (docs/performance-35-cpu.md), with s2's snappy encoder:
// 128 KiB made a lake of 15.5 MB at 47-49 MB of RSS, 256 KiB 12.8 MB at
// 52-55 MB, 512 KiB 9.9 MB at 62 MB (the float columns' pages long
// enough for snappy to find their repeats), but on the 500 MB one 512
// KiB peaked at 94 MB against 76-79 MB for 256 KiB (main's writer: 84
// MB); with parquet-go's own ("better") snappy encoder, 128 KiB made 14.1
// MB at 65 MB and 256 KiB 10.8 MB at 73 MB.
const dataPageSize = 256 << 10

// maxDictBytes bounds a dictionary column's dictionary in a column chunk
// (commonEncoding); beyond it (a column of many different values) the
// chunk goes on plain.
const maxDictBytes = 64 << 10

// writerOptions are the files' options: the codec, given to this
// writer's files only; statistics (column chunks and the column index,
// a page's bounds) for readers' filters; the encodings of the schema
// (commonEncoding), plain otherwise (byte arrays too). DELTA_BINARY_PACKED and dictionaries
// are Parquet format 2.x features that Spark's reader (3.3 and later),
// DuckDB, pyarrow and Polars read; data pages are version 1, as Spark and
// most readers write them.
func writerOptions(createdBy string, codec compress.Codec) []parquet.WriterOption {
	if createdBy == "" {
		createdBy = "dissect"
	}
	return []parquet.WriterOption{
		parquet.Compression(codec),
		parquet.DataPageVersion(1),
		// Each page's minimum and maximum go to the column index (and
		// the column chunks' statistics), where readers look for them;
		// the same in every page's header would compute them twice
		// (two string comparisons per value of the dictionary columns).
		parquet.DataPageStatistics(false),
		parquet.PageBufferSize(dataPageSize),
		parquet.DictionaryMaxBytes(maxDictBytes),
		// The library's default for byte arrays is DELTA_LENGTH_BYTE_ARRAY,
		// which Spark reads from 3.3 only; plain as before.
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		createdByOption(createdBy),
	}
}

// createdByOption sets the files' created_by as given: parquet.CreatedBy
// would format it itself, without the space before "(build".
type createdByOption string

func (c createdByOption) ConfigureWriter(cfg *parquet.WriterConfig) { cfg.CreatedBy = string(c) }
