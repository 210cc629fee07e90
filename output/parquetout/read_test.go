package parquetout

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// fileSchema is a part's schema as a reader finds it in the footer.
type fileSchema struct{ *parquet.Schema }

// Columns returns the leaf columns' paths, in the file's order.
func (s fileSchema) Columns() []string {
	var out []string
	for _, p := range s.Schema.Columns() {
		out = append(out, strings.Join(p, "."))
	}
	return out
}

// openPart opens the part at path with parquet-go's reader; the file is
// closed when the test ends.
func openPart(t *testing.T, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return pf
}

// readRows reads the part at path with parquet-go's reader, each row as
// a map: int64 for INT64 columns (signed or not), float32, float64,
// bool, string for STRING and BYTE_ARRAY, int64 nanoseconds for
// timestamps, []any for lists, map[string]any for structs, nil for nulls.
func readRows(t *testing.T, path string) (fileSchema, []map[string]any) {
	t.Helper()
	pf := openPart(t, path)
	r := parquet.NewReader(pf)
	defer r.Close()
	rows := make([]map[string]any, pf.NumRows())
	for i := range rows {
		m := map[string]any{}
		if err := r.Read(&m); err != nil {
			t.Fatalf("%s: row %d: %v", path, i, err)
		}
		rows[i] = goValue(t, pf.Schema(), m).(map[string]any)
	}
	return fileSchema{pf.Schema()}, rows
}

// goValue returns v, the value of node n as the library's reader gives
// it, as readRows does.
func goValue(t *testing.T, n parquet.Node, v any) any {
	t.Helper()
	if v == nil {
		return nil
	}
	if isList(n) {
		elem := n.Fields()[0].Fields()[0]
		out := []any{}
		switch l := v.(type) {
		case []any:
			for _, x := range l {
				out = append(out, goValue(t, elem, x))
			}
		case map[string]any:
			items, _ := l["list"].([]any)
			for _, x := range items {
				out = append(out, goValue(t, elem, x.(map[string]any)["element"]))
			}
		default:
			t.Fatalf("list as %T", v)
		}
		return out
	}
	if !n.Leaf() {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("group as %T", v)
		}
		out := map[string]any{}
		for _, f := range n.Fields() {
			out[f.Name()] = goValue(t, f, m[f.Name()])
		}
		return out
	}
	switch x := v.(type) {
	case int64, float32, float64, bool, string:
		return x
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case int:
		return int64(x)
	case []byte:
		return string(x)
	case time.Time:
		return x.UnixNano()
	}
	t.Fatalf("value of %T", v)
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
	typ := c.Node.Type()
	out := typ.Kind().String()
	if lt := typ.LogicalType(); lt != nil && lt.String() != "" {
		out += " " + lt.String()
	}
	return out
}

// isList says whether n is a group of the LIST logical type.
func isList(n parquet.Node) bool {
	if n.Leaf() {
		return false
	}
	lt := n.Type().LogicalType()
	if lt == nil {
		return false
	}
	_, ok := lt.Value.(*format.ListType)
	return ok
}
