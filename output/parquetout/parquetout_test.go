package parquetout

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go"
)

// lakeFiles returns the .parquet files under dir, relative to it.
func lakeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".inprogress") {
			t.Errorf("left in progress: %s", p)
		}
		if strings.HasSuffix(p, ".parquet") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func readRows(t *testing.T, path string) (*parquet.Schema, []map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	r := parquet.NewGenericReader[map[string]any](f, pf.Schema())
	defer r.Close()
	rows := make([]map[string]any, pf.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	n, err := r.Read(rows)
	if n != len(rows) {
		t.Fatalf("read %d of %d rows: %v", n, len(rows), err)
	}
	return pf.Schema(), rows
}

// leafType returns the physical type and logical type of a column.
func leafType(t *testing.T, s *parquet.Schema, path ...string) string {
	t.Helper()
	col, ok := s.Lookup(path...)
	if !ok {
		t.Fatalf("no column %v in %s", path, s)
	}
	typ := col.Node.Type()
	lt := ""
	if l := typ.LogicalType(); l != nil {
		lt = " " + l.String()
	}
	return typ.Kind().String() + lt
}

func TestWriterTypesAndValues(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "a.pcap"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	raw := []byte{0xde, 0xad}
	r := &dissect.Record{Time: t0, Proto: "vrpn", Transport: dissect.UDP, Stream: 3, Src: "a:1", Dst: "b:2",
		Offset: 10, Length: 20, Type: "vrpn_Tracker Pos_Quat", Warnings: []string{"w1"}}
	r.Add("x", dissect.Float32(0.1))
	r.Add("d", dissect.Float(math.Copysign(0, -1)))
	r.Add("zero", dissect.Int(0))
	r.Add("empty", dissect.Str(""))
	r.Add("i", dissect.Int(math.MinInt64))
	r.Add("u", dissect.Uint(math.MaxUint64))
	r.Add("s", dissect.Str("hé"))
	r.Add("b", dissect.Bytes(raw))
	r.Add("ok", dissect.Bool(true))
	r.Add("at", dissect.Time(t0))
	r.Add("pos", dissect.Array([]dissect.Field{dissect.Elem(dissect.Float(1)), dissect.Elem(dissect.Float(2))}))
	r.Add("obj", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Int(7)}, {Key: "n", Value: dissect.Str("v")}}))
	r.Add("time", dissect.Int(5)) // a common column's name
	if err := w.Record(r); err != nil {
		t.Fatal(err)
	}
	raw[0] = 0 // the writer must have copied
	// Second record: absent fields (nulls), a kind that does not fit, a new key.
	w.SetCapture("b.pcap")
	r2 := &dissect.Record{Time: t0.Add(time.Nanosecond), Proto: "vrpn", Type: "vrpn_Tracker Pos_Quat"}
	r2.Add("x", dissect.Float(math.Inf(1)))
	r2.Add("i", dissect.Str("not an int"))
	r2.Add("new", dissect.Uint(9))
	r2.Add("obj", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Value{}}}))
	if err := w.Record(r2); err != nil {
		t.Fatal(err)
	}
	// A gap without protocol.
	if err := w.Record(&dissect.Record{Time: t0, Type: dissect.TypeGap, Length: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := lakeFiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	var vrpn string
	for _, f := range files {
		if strings.HasPrefix(f, "proto=vrpn/type=vrpn_Tracker Pos_Quat/part-") {
			vrpn = f
		} else if !strings.HasPrefix(f, "proto=__HIVE_DEFAULT_PARTITION__/type=gap/part-") {
			t.Errorf("unexpected file %s", f)
		}
	}
	s, rows := readRows(t, filepath.Join(dir, vrpn))
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"x"}, "DOUBLE"},
		{[]string{"d"}, "DOUBLE"},
		{[]string{"i"}, "INT64 INT(64,true)"},
		{[]string{"u"}, "INT64 INT(64,false)"},
		{[]string{"s"}, "BYTE_ARRAY STRING"},
		{[]string{"b"}, "BYTE_ARRAY"},
		{[]string{"ok"}, "BOOLEAN"},
		{[]string{"at"}, "INT64 TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		{[]string{"time"}, "INT64 TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		{[]string{"f_time"}, "INT64 INT(64,true)"},
		{[]string{"pos", "list", "element"}, "DOUBLE"},
		{[]string{"obj", "k"}, "INT64 INT(64,true)"},
		{[]string{"warnings", "list", "element"}, "BYTE_ARRAY STRING"},
		{[]string{"capture"}, "BYTE_ARRAY STRING"},
	} {
		if got := leafType(t, s, c.path...); got != c.want {
			t.Errorf("%v: type %s, want %s", c.path, got, c.want)
		}
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	a, b := rows[0], rows[1]
	t.Logf("row 0: %#v", a)
	t.Logf("row 1: %#v", b)
	if x, _ := a["x"].(float64); math.Float64bits(x) != math.Float64bits(float64(float32(0.1))) {
		t.Errorf("x %v", a["x"])
	}
	if d, _ := a["d"].(float64); math.Float64bits(d) != math.Float64bits(math.Copysign(0, -1)) {
		t.Errorf("d %v", a["d"])
	}
	if u, _ := a["u"].(int64); a["i"] != int64(math.MinInt64) || uint64(u) != math.MaxUint64 || a["s"] != "hé" || a["ok"] != true {
		t.Errorf("i %v u %v s %v ok %v", a["i"], a["u"], a["s"], a["ok"])
	}
	if bs, _ := a["b"].(string); bs != "\xde\xad" {
		t.Errorf("b %v", a["b"])
	}
	if a["capture"] != "a.pcap" || b["capture"] != "b.pcap" || a["src"] != "a:1" || a["transport"] != "udp" {
		t.Errorf("common columns %v %v %v %v", a["capture"], b["capture"], a["src"], a["transport"])
	}
	if at, _ := a["at"].(time.Time); !at.Equal(t0) {
		if ns, ok := a["at"].(int64); !ok || ns != t0.UnixNano() {
			t.Errorf("at %#v", a["at"])
		}
	}
	if a["zero"] != int64(0) || a["empty"] != "" {
		t.Errorf("zero values read as %#v %#v", a["zero"], a["empty"])
	}
	if a["extra_json"] != nil {
		t.Errorf("row 0 extra_json %v", a["extra_json"])
	}
	if x, _ := b["x"].(float64); !math.IsInf(x, 1) {
		t.Errorf("row 1 x %v", b["x"])
	}
	if b["s"] != nil || b["u"] != nil || b["i"] != nil {
		t.Errorf("row 1: absent fields not null: s %v u %v i %v", b["s"], b["u"], b["i"])
	}
	if want := `{"i":"not an int","new":9}`; b["extra_json"] != want {
		t.Errorf("row 1 extra_json %v, want %s", b["extra_json"], want)
	}
}

func TestEscapePartition(t *testing.T) {
	for in, want := range map[string]string{
		"vrpn_Tracker Pos_Quat": "vrpn_Tracker Pos_Quat",
		"a/b=c%d":               "a%2Fb%3Dc%25d",
		"x\ny:z":                "x%0Ay%3Az",
	} {
		if got := EscapePartition(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestWriterLRUAndRowGroups(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir, Options{MaxOpen: 2, RowGroupRows: 10, PartRows: 30})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		r := &dissect.Record{Proto: "p", Type: []string{"a", "b", "c"}[i%3]}
		r.Add("n", dissect.Int(int64(i)))
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := lakeFiles(t, dir)
	total := 0
	for _, f := range files {
		_, rows := readRows(t, filepath.Join(dir, f))
		total += len(rows)
	}
	if total != 300 || len(files) < 3 {
		t.Errorf("%d rows in %d files", total, len(files))
	}
}

func BenchmarkRecord(b *testing.B) {
	w, err := New(b.TempDir(), Options{Capture: "bench.pcap"})
	if err != nil {
		b.Fatal(err)
	}
	r := &dissect.Record{Time: time.Unix(1, 0), Proto: "deltarobot", Transport: dissect.TCP, Src: "10.0.0.1:4000",
		Dst: "10.0.0.2:50000", Length: 24, Type: "position"}
	for _, k := range []string{"x", "y", "z", "u"} {
		r.Add(k, dissect.Float32(1.5))
	}
	r.Add("seq", dissect.Uint(1))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Offset = int64(i) * 24
		if err := w.Record(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}
