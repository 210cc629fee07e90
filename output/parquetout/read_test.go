package parquetout

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// fileSchema is a part's schema as a reader finds it in the footer.
type fileSchema struct{ *schema.Schema }

// Lookup returns the leaf column at path.
func (s fileSchema) Lookup(path ...string) (*schema.Column, bool) {
	i := s.ColumnIndexByName(strings.Join(path, "."))
	if i < 0 {
		return nil, false
	}
	return s.Column(i), true
}

// Columns returns the leaf columns' paths, in the file's order.
func (s fileSchema) Columns() []string {
	out := make([]string, s.NumColumns())
	for i := range out {
		out[i] = s.Column(i).Path()
	}
	return out
}

// readRows reads the part at path with arrow-go's reader (pqarrow), each
// row as a map: int64 for INT64 columns (signed or not), float32,
// float64, bool, string for STRING and BYTE_ARRAY, int64 nanoseconds for
// timestamps, []any for lists, map[string]any for structs, nil for nulls.
func readRows(t *testing.T, path string) (fileSchema, []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer tbl.Release()
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		i := 0
		for _, chunk := range col.Data().Chunks() {
			for j := 0; j < chunk.Len(); j++ {
				rows[i][col.Name()] = goValue(t, chunk, j)
				i++
			}
		}
	}
	return fileSchema{pr.MetaData().Schema}, rows
}

// goValue returns the value at i of a as readRows does.
func goValue(t *testing.T, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i)
	case *array.Uint64:
		return int64(a.Value(i))
	case *array.Float32:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.List:
		from, to := a.ValueOffsets(i)
		out := []any{}
		for j := from; j < to; j++ {
			out = append(out, goValue(t, a.ListValues(), int(j)))
		}
		return out
	case *array.Struct:
		out := map[string]any{}
		st := a.DataType().(*arrow.StructType)
		for k := 0; k < a.NumField(); k++ {
			out[st.Field(k).Name] = goValue(t, a.Field(k), i)
		}
		return out
	}
	t.Fatalf("column of %s", a.DataType())
	return nil
}

// leafType returns the physical type and logical type of a column, as
// "INT64 INT(64,true)".
func leafType(t *testing.T, s fileSchema, path ...string) string {
	t.Helper()
	c, ok := s.Lookup(path...)
	if !ok {
		t.Fatalf("no column %v in %v", path, s.Columns())
	}
	out := c.PhysicalType().String()
	switch l := c.LogicalType().(type) {
	case schema.IntLogicalType:
		out += fmt.Sprintf(" INT(%d,%t)", l.BitWidth(), l.IsSigned())
	case schema.TimestampLogicalType:
		out += fmt.Sprintf(" TIMESTAMP(isAdjustedToUTC=%t,unit=%s)", l.IsAdjustedToUTC(), map[schema.TimeUnitType]string{schema.TimeUnitNanos: "NANOS", schema.TimeUnitMicros: "MICROS", schema.TimeUnitMillis: "MILLIS"}[l.TimeUnit()])
	case schema.StringLogicalType:
		out += " STRING"
	case schema.NoLogicalType, nil:
	default:
		out += " " + l.String()
	}
	return out
}
