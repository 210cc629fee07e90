package parquetout

import (
	"fmt"
	"strings"

	apq "github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
)

// The files are written with arrow-go's typed column writers
// (github.com/apache/arrow-go/v18/parquet/file), which take a column's
// values with their levels as plain slices, from a schema built with
// arrow-go's schema package (schema.go).

// Compressions are the page codecs a lake may be written with
// (Options.Compression), the first the default. Measured on the 50 MB
// Deltarobot capture (docs/performance.md): snappy, what DuckDB, Spark
// and pyarrow write by default, the least CPU of the three codecs and a
// lake of 13.1 MB; zstd (its default level, 3) the smallest lake, 11.0
// MB, for about 10% more of the writer's CPU and 8 MB more memory; gzip
// 12.1 MB for about 10% more; none 56 MB. zstd's fastest level made a larger lake than snappy's
// (15.6 MB) for the same CPU. Every reader of the lake (DuckDB, Spark,
// pyarrow, Polars) reads all four.
var Compressions = []string{"snappy", "zstd", "gzip", "none"}

// codecOf returns the codec named c ("" for the default).
func codecOf(c string) (compress.Compression, error) {
	switch c {
	case "", "snappy":
		return compress.Codecs.Snappy, nil
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "none":
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("compression %q: want one of %s", c, strings.Join(Compressions, ", "))
}

// ValidCompression says whether c names a codec of Compressions.
func ValidCompression(c string) error {
	_, err := codecOf(c)
	return err
}

// dataPageSize bounds a data page. The writer's buffers are a page's
// size, and made anew for each column chunk: pages of 64 KiB instead of
// the library's 1 MiB keep them out of the row groups' size.
const dataPageSize = 64 << 10

// writerProps are the files' properties: the codec, given to this
// writer's files only (arrow-go's registry of codecs is left as it is),
// statistics for readers' filters, DELTA_BINARY_PACKED for the common
// INT64 columns (times and offsets that grow, streams and lengths that
// repeat: on the 50 MB Deltarobot capture a lake of 15 MB instead of
// 18 MB, in the same time), dictionaries for the repeated string
// columns, made here from their runs (dict.go; arrow-go's own dictionary
// encoding of values took more time, and an allocation per value), plain
// encodings otherwise. All are Parquet format 2.x features that Spark's
// reader (3.3 and later), DuckDB, pyarrow and Polars read; data pages
// are version 1, as Spark and most readers write them.
func writerProps(createdBy string, codec compress.Compression) *apq.WriterProperties {
	if createdBy == "" {
		createdBy = "dissect"
	}
	props := []apq.WriterProperty{
		apq.WithCompression(codec),
		apq.WithDictionaryDefault(false),
		apq.WithStats(true),
		apq.WithDataPageSize(dataPageSize),
		apq.WithDataPageVersion(apq.DataPageV1),
		apq.WithCreatedBy(createdBy),
	}
	for _, c := range []string{"time", "stream", "offset", "length"} {
		props = append(props, apq.WithEncodingFor(c, apq.Encodings.DeltaBinaryPacked))
	}
	for _, c := range dictColumns {
		props = append(props, apq.WithDictionaryFor(c, true))
	}
	return apq.NewWriterProperties(props...)
}
