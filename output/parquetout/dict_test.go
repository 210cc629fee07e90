package parquetout

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/dissect-tools/dissect/dissect"
)

// TestDictColumns: the src column of a table with a few addresses is
// written as a dictionary, of one with more than maxDictEntries plain;
// both read back as written, and every row group's and data page's
// statistics are the minimum and maximum of its rows' values, counted
// here from the input.
func TestDictColumns(t *testing.T) {
	const rows, groupRows = 6000, 2500
	d := &dissect.TypeDecl{Type: "*"}
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "c.pcap", RowGroupRows: groupRows, Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	srcOf := map[string]func(i int) string{
		// runs of 1 to 7 rows of 5 addresses, not in order
		"few": func(i int) string { return fmt.Sprintf("10.0.0.%d:4000", (i/(1+i%7)*3)%5) },
		// 400 addresses in runs of 3: too many for a dictionary
		"many": func(i int) string { return fmt.Sprintf("h%03d", i/3%400) },
	}
	for i := range rows {
		for _, typ := range []string{"few", "many"} {
			r := &dissect.Record{Proto: "p", Type: typ, Src: srcOf[typ](i), Dst: "d", Offset: int64(i)}
			if err := w.Record(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for typ, dict := range map[string]bool{"few": true, "many": false} {
		path := onlyFile(t, dir, "proto=p/type="+typ)
		_, got := readRows(t, path)
		if len(got) != rows {
			t.Fatalf("%s: %d rows", typ, len(got))
		}
		for i, g := range got {
			if g["src"] != srcOf[typ](i) || g["offset"] != int64(i) || g["capture"] != "c.pcap" || g["dst"] != "d" {
				t.Fatalf("%s: row %d: %v, want src %s", typ, i, g, srcOf[typ](i))
			}
		}
		checkStrStats(t, path, "src", dict, func(row int) string { return srcOf[typ](row) })
		checkStrStats(t, path, "capture", true, func(int) string { return "c.pcap" })
	}
}

// checkStrStats checks column name of the file at path: a dictionary
// page or not, and each row group's and data page's minimum, maximum and
// counts against value(row).
func checkStrStats(t *testing.T, path, name string, dict bool, value func(row int) string) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	col := r.MetaData().Schema.ColumnIndexByName(name)
	minMax := func(from, to int) (string, string) {
		lo, hi := value(from), value(from)
		for i := from; i < to; i++ {
			lo, hi = min(lo, value(i)), max(hi, value(i))
		}
		return lo, hi
	}
	row := 0
	for g := range r.NumRowGroups() {
		rg := r.RowGroup(g)
		n := int(rg.NumRows())
		cc, err := rg.MetaData().ColumnChunk(col)
		if err != nil {
			t.Fatal(err)
		}
		if cc.HasDictionaryPage() != dict {
			t.Errorf("%s row group %d: dictionary page %v, want %v (encodings %v)", name, g, cc.HasDictionaryPage(), dict, cc.Encodings())
		}
		st, err := cc.Statistics()
		if err != nil {
			t.Fatal(err)
		}
		bs := st.(*metadata.ByteArrayStatistics)
		lo, hi := minMax(row, row+n)
		if string(bs.Min()) != lo || string(bs.Max()) != hi || bs.NullCount() != 0 || bs.NumValues() != int64(n) {
			t.Errorf("%s row group %d: min %q max %q nulls %d values %d, want %q %q 0 %d", name, g,
				bs.Min(), bs.Max(), bs.NullCount(), bs.NumValues(), lo, hi, n)
		}
		pr, err := rg.GetColumnPageReader(col)
		if err != nil {
			t.Fatal(err)
		}
		prow := row
		for pr.Next() {
			p, ok := pr.Page().(*file.DataPageV1)
			if !ok {
				continue // the dictionary page
			}
			k := int(p.NumValues())
			ps := p.Statistics()
			lo, hi := minMax(prow, prow+k)
			if !ps.HasMin || !ps.HasMax || string(ps.Min) != lo || string(ps.Max) != hi {
				t.Errorf("%s row group %d page at row %d: min %q max %q, want %q %q", name, g, prow, ps.Min, ps.Max, lo, hi)
			}
			prow += k
		}
		if err := pr.Err(); err != nil {
			t.Fatal(err)
		}
		if prow != row+n {
			t.Errorf("%s row group %d: pages of %d rows, want %d", name, g, prow-row, n)
		}
		row += n
	}
	if row != int(r.NumRows()) {
		t.Errorf("%d rows in row groups of %d", r.NumRows(), row)
	}
}
