package parquetout

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
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

// declOf returns a Decl func for a fixed set of declarations: the one of
// the record's type whose variant (if any) it holds, else "*" when
// declared.
func declOf(ds ...*dissect.TypeDecl) func(*dissect.Record) *dissect.TypeDecl {
	return func(r *dissect.Record) *dissect.TypeDecl {
		var wild *dissect.TypeDecl
		for _, d := range ds {
			if d.Type == "*" {
				wild = d
			}
			if d.Type != r.Type {
				continue
			}
			if d.Variant == nil {
				return d
			}
			if v, ok := r.Fields.Get(d.Variant.Key); ok && v.Str() == d.Variant.Value {
				return d
			}
		}
		return wild
	}
}

// writeLake writes recs with declarations ds into a new lake and returns
// its directory and the writer's ExtraRows.
func writeLake(t *testing.T, ds []*dissect.TypeDecl, recs ...*dissect.Record) (string, int64) {
	t.Helper()
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "c.pcap", Decl: declOf(ds...)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	n := w.ExtraRows()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, n
}

// onlyFile returns the one part of partition rel ("proto=p/type=t").
func onlyFile(t *testing.T, dir, rel string) string {
	t.Helper()
	var in []string
	for _, f := range lakeFiles(t, dir) {
		if filepath.Dir(f) == rel {
			in = append(in, f)
		}
	}
	if len(in) != 1 {
		t.Fatalf("%s: parts %v (lake: %v)", rel, in, lakeFiles(t, dir))
	}
	return filepath.Join(dir, in[0])
}

// partWith returns the part in dir/rel whose rows have col = val: the
// variants of a type share its directory, a part each.
func partWith(t *testing.T, dir, rel, col, val string) string {
	t.Helper()
	var in []string
	for _, f := range lakeFiles(t, dir) {
		if filepath.Dir(f) != rel {
			continue
		}
		if _, rows := readRows(t, filepath.Join(dir, f)); len(rows) > 0 && rows[0][col] == val {
			in = append(in, f)
		}
	}
	if len(in) != 1 {
		t.Fatalf("%s, %s = %q: parts %v (lake: %v)", rel, col, val, in, lakeFiles(t, dir))
	}
	return filepath.Join(dir, in[0])
}

func rec(typ string, kv ...any) *dissect.Record {
	r := &dissect.Record{Proto: "p", Type: typ}
	for i := 0; i < len(kv); i += 2 {
		r.Add(kv[i].(string), kv[i+1].(dissect.Value))
	}
	return r
}

func floats(fs ...float64) dissect.Value {
	items := make([]dissect.Field, len(fs))
	for i, f := range fs {
		items[i] = dissect.Elem(dissect.Float(f))
	}
	return dissect.Array(items)
}

func TestWriterTypesAndValues(t *testing.T) {
	obj := []dissect.FieldDecl{{Name: "k", Kind: dissect.KindInt}, {Name: "n", Kind: dissect.KindString}}
	d := &dissect.TypeDecl{Type: "vrpn_Tracker Pos_Quat", Fields: []dissect.FieldDecl{
		{Name: "x", Kind: dissect.KindFloat32}, {Name: "d", Kind: dissect.KindFloat},
		{Name: "zero", Kind: dissect.KindInt}, {Name: "empty", Kind: dissect.KindString},
		{Name: "i", Kind: dissect.KindInt}, {Name: "u", Kind: dissect.KindUint},
		{Name: "s", Kind: dissect.KindString}, {Name: "b", Kind: dissect.KindBytes},
		{Name: "ok", Kind: dissect.KindBool}, {Name: "at", Kind: dissect.KindTime},
		{Name: "pos", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}},
		{Name: "obj", Kind: dissect.KindObject, Fields: obj},
		{Name: "time", Kind: dissect.KindInt}, // a common column's name
		{Name: "absent", Kind: dissect.KindString},
	}}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	raw := []byte{0xde, 0xad}
	r := &dissect.Record{Time: t0, Proto: "vrpn", Transport: dissect.UDP, Stream: 3, Src: "a:1", Dst: "b:2",
		Offset: 10, Length: 20, Type: "vrpn_Tracker Pos_Quat", Warnings: []string{"w1", "w2"}}
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
	r.Add("pos", floats(1, 2))
	r.Add("obj", dissect.Object([]dissect.Field{{Key: "k", Value: dissect.Int(7)}, {Key: "n", Value: dissect.Str("v")}}))
	r.Add("time", dissect.Int(5))
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "a.pcap", Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Record(r); err != nil {
		t.Fatal(err)
	}
	raw[0] = 0 // the writer must have copied
	w.SetCapture("b.pcap")
	// Second record: fields absent (nulls), in another order.
	r2 := &dissect.Record{Time: t0.Add(time.Nanosecond), Proto: "vrpn", Type: "vrpn_Tracker Pos_Quat"}
	r2.Add("obj", dissect.Object([]dissect.Field{{Key: "n", Value: dissect.Str("w")}}))
	r2.Add("x", dissect.Float32(float32(math.Inf(1))))
	if err := w.Record(r2); err != nil {
		t.Fatal(err)
	}
	// A gap without protocol, declared with no fields.
	gap := &dissect.TypeDecl{Type: dissect.TypeGap}
	w.o.Decl = declOf(d, gap)
	if err := w.Record(&dissect.Record{Time: t0, Type: dissect.TypeGap, Length: 5}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := w.ExtraRows(); n != 0 {
		t.Errorf("ExtraRows %d", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	onlyFile(t, dir, "proto=__HIVE_DEFAULT_PARTITION__/type=gap")
	s, rows := readRows(t, onlyFile(t, dir, "proto=vrpn/type=vrpn_Tracker Pos_Quat"))
	for _, c := range []struct {
		path []string
		want string
	}{
		{[]string{"x"}, "FLOAT"},
		{[]string{"d"}, "DOUBLE"},
		{[]string{"i"}, "INT64 INT(64,true)"},
		{[]string{"u"}, "INT64 INT(64,false)"},
		{[]string{"s"}, "BYTE_ARRAY STRING"},
		{[]string{"b"}, "BYTE_ARRAY"},
		{[]string{"ok"}, "BOOLEAN"},
		{[]string{"at"}, "INT64 TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		{[]string{"time"}, "INT64 TIMESTAMP(isAdjustedToUTC=false,unit=NANOS)"},
		{[]string{"f_time"}, "INT64 INT(64,true)"},
		{[]string{"absent"}, "BYTE_ARRAY STRING"},
		{[]string{"pos", "list", "element"}, "DOUBLE"},
		{[]string{"obj", "k"}, "INT64 INT(64,true)"},
		{[]string{"obj", "n"}, "BYTE_ARRAY STRING"},
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
	if x, _ := a["x"].(float32); x != 0.1 {
		t.Errorf("x %#v", a["x"])
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
	if a["capture"] != "a.pcap" || b["capture"] != "b.pcap" || a["src"] != "a:1" || a["transport"] != "udp" ||
		a["stream"] != int64(3) || a["offset"] != int64(10) || a["length"] != int64(20) || a["f_time"] != int64(5) {
		t.Errorf("common columns %v %v %v %v %v %v %v %v", a["capture"], b["capture"], a["src"], a["transport"],
			a["stream"], a["offset"], a["length"], a["f_time"])
	}
	for _, col := range []string{"at", "time"} {
		if at, _ := a[col].(time.Time); !at.Equal(t0) {
			if ns, ok := a[col].(int64); !ok || ns != t0.UnixNano() {
				t.Errorf("%s %#v", col, a[col])
			}
		}
	}
	if fmt.Sprint(a["warnings"]) != "[w1 w2]" || b["warnings"] != nil {
		t.Errorf("warnings %#v, %#v", a["warnings"], b["warnings"])
	}
	if fmt.Sprint(a["pos"]) != "[1 2]" || fmt.Sprint(a["obj"]) != "map[k:7 n:v]" {
		t.Errorf("pos %#v obj %#v", a["pos"], a["obj"])
	}
	if a["zero"] != int64(0) || a["empty"] != "" || a["absent"] != nil {
		t.Errorf("zero values read as %#v %#v, absent as %#v", a["zero"], a["empty"], a["absent"])
	}
	if x, _ := b["x"].(float32); !math.IsInf(float64(x), 1) {
		t.Errorf("row 1 x %v", b["x"])
	}
	if b["s"] != nil || b["u"] != nil || b["i"] != nil || b["pos"] != nil {
		t.Errorf("row 1: absent fields not null: s %v u %v i %v pos %v", b["s"], b["u"], b["i"], b["pos"])
	}
	if obj, _ := b["obj"].(map[string]any); obj == nil || obj["k"] != nil || obj["n"] != "w" {
		t.Errorf("row 1 obj %#v", b["obj"])
	}
	if a["extra_json"] != nil || b["extra_json"] != nil {
		t.Errorf("extra_json %v, %v", a["extra_json"], b["extra_json"])
	}
}

// TestWriterOptionalFieldLater: a field the first record lacks has its
// typed column all the same, and the record that has it goes there, not
// to extra_json.
func TestWriterOptionalFieldLater(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{
		{Name: "a", Kind: dissect.KindInt, Required: true},
		{Name: "opt", Kind: dissect.KindFloat32},
		{Name: "pos", Kind: dissect.KindArray, Elem: &dissect.FieldDecl{Kind: dissect.KindFloat}},
	}}
	dir, extra := writeLake(t, []*dissect.TypeDecl{d},
		rec("t", "a", dissect.Int(1), "pos", dissect.Array(nil)),
		rec("t", "a", dissect.Int(2), "opt", dissect.Float32(2.5), "pos", floats(3)))
	if extra != 0 {
		t.Errorf("ExtraRows %d", extra)
	}
	s, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t"))
	if got := leafType(t, s, "opt"); got != "FLOAT" {
		t.Errorf("opt: %s", got)
	}
	if got := leafType(t, s, "pos", "list", "element"); got != "DOUBLE" {
		t.Errorf("pos: %s", got)
	}
	if len(rows) != 2 || rows[0]["opt"] != nil || rows[1]["opt"] != float32(2.5) || rows[1]["extra_json"] != nil {
		t.Fatalf("rows %v", rows)
	}
	if p := fmt.Sprint(rows[0]["pos"], rows[1]["pos"]); p != "[] [3]" {
		t.Errorf("pos %s", p)
	}
}

// TestWriterVariants: the variants of a type are in its partition, so
// that the type column is the record's type, each in parts of its own
// with its own columns.
func TestWriterVariants(t *testing.T) {
	req := &dissect.TypeDecl{Type: "GetSettings", Variant: &dissect.Variant{Key: "direction", Value: "request"},
		Fields: []dissect.FieldDecl{{Name: "direction", Kind: dissect.KindString}, {Name: "code", Kind: dissect.KindUint}}}
	resp := &dissect.TypeDecl{Type: "GetSettings", Variant: &dissect.Variant{Key: "direction", Value: "response"},
		Fields: []dissect.FieldDecl{{Name: "direction", Kind: dissect.KindString}, {Name: "gain", Kind: dissect.KindFloat}}}
	dir, extra := writeLake(t, []*dissect.TypeDecl{req, resp},
		rec("GetSettings", "direction", dissect.Str("request"), "code", dissect.Uint(7)),
		rec("GetSettings", "direction", dissect.Str("response"), "gain", dissect.Float(0.5)),
		rec("GetSettings", "direction", dissect.Str("request"), "code", dissect.Uint(8)))
	if extra != 0 {
		t.Errorf("ExtraRows %d", extra)
	}
	if fs := lakeFiles(t, dir); len(fs) != 2 {
		t.Errorf("files %v", fs)
	}
	s, rows := readRows(t, partWith(t, dir, "proto=p/type=GetSettings", "direction", "request"))
	if _, ok := s.Lookup("gain"); ok || len(rows) != 2 || rows[0]["code"] != int64(7) || rows[1]["code"] != int64(8) {
		t.Errorf("request: %v", rows)
	}
	s, rows = readRows(t, partWith(t, dir, "proto=p/type=GetSettings", "direction", "response"))
	if _, ok := s.Lookup("code"); ok || len(rows) != 1 || rows[0]["gain"] != 0.5 {
		t.Errorf("response: %v", rows)
	}
}

// TestWriterWildcard: records of a "*" declaration go to their own
// type's partition.
func TestWriterWildcard(t *testing.T) {
	d := &dissect.TypeDecl{Type: "*", Fields: []dissect.FieldDecl{{Name: "sender", Kind: dissect.KindString}}}
	dir, extra := writeLake(t, []*dissect.TypeDecl{d},
		rec("a", "sender", dissect.Str("x")), rec("b/c", "sender", dissect.Str("y")))
	if extra != 0 {
		t.Errorf("ExtraRows %d", extra)
	}
	_, rows := readRows(t, onlyFile(t, dir, "proto=p/type=b%2Fc"))
	if len(rows) != 1 || rows[0]["sender"] != "y" {
		t.Errorf("rows %v", rows)
	}
	onlyFile(t, dir, "proto=p/type=a")
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
	d := &dissect.TypeDecl{Type: "*", Fields: []dissect.FieldDecl{{Name: "n", Kind: dissect.KindInt}}}
	w, err := New(dir, Options{MaxOpen: 2, RowGroupRows: 10, PartRows: 30, Decl: declOf(d)})
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
	seen := map[int64]bool{}
	for _, f := range files {
		_, rows := readRows(t, filepath.Join(dir, f))
		for _, r := range rows {
			n, _ := r["n"].(int64)
			if r["capture"] != "" {
				t.Errorf("capture %#v, want \"\" (none set)", r["capture"])
			}
			if typ := []string{"a", "b", "c"}[n%3]; !strings.HasPrefix(f, "proto=p/type="+typ+"/") || seen[n] {
				t.Errorf("row n=%d in %s", n, f)
			}
			seen[n] = true
		}
	}
	// Three tables, each completed after 30 rows and whenever a third
	// is opened: many parts, every row once.
	if len(seen) != 300 || len(files) < 10 {
		t.Errorf("%d rows in %d files", len(seen), len(files))
	}
}

func BenchmarkRecord(b *testing.B) {
	d := &dissect.TypeDecl{Type: "position", Fields: []dissect.FieldDecl{
		{Name: "x", Kind: dissect.KindFloat32}, {Name: "y", Kind: dissect.KindFloat32},
		{Name: "z", Kind: dissect.KindFloat32}, {Name: "u", Kind: dissect.KindFloat32},
		{Name: "seq", Kind: dissect.KindUint}}}
	w, err := New(b.TempDir(), Options{Capture: "bench.pcap", Decl: func(*dissect.Record) *dissect.TypeDecl { return d }})
	if err != nil {
		b.Fatal(err)
	}
	r := &dissect.Record{Time: time.Unix(1, 0), Proto: "deltarobot", Transport: dissect.TCP, Src: "10.0.0.1:4000",
		Dst: "10.0.0.2:50000", Length: 24, Type: "position"}
	for _, k := range []string{"x", "y", "z", "u"} {
		r.Add(k, dissect.Float32(1.5))
	}
	r.Add("seq", dissect.Uint(1))
	b.SetBytes(r.Length) // the message's bytes on the wire
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
