package parquetout

import (
	"fmt"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/parquet-go/parquet-go/format"
)

// TestDictColumns: the src column of a table with a few addresses is
// written as a dictionary; of one with more than maxDictBytes of
// distinct values by a page's end, the row group's later pages are plain; both read back as written, and every
// row group's statistics are the minimum and maximum of its rows'
// values, counted here from the input, and every data page's bounds in
// the column index hold its rows' values (exactly, for values of at most
// 16 bytes, the index's limit).
func TestDictColumns(t *testing.T) {
	// A row group of more than a page of dictionary indexes (4 bytes
	// each in the page buffer), and a shorter one.
	const groupRows = dataPageSize/4 + 8000
	const rows = groupRows + 4000
	d := &dissect.TypeDecl{Type: "*"}
	dir := t.TempDir()
	w, err := New(dir, Options{Capture: "c.pcap", RowGroupRows: groupRows, Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	srcOf := map[string]func(i int) string{
		// runs of 1 to 7 rows of 5 addresses, not in order
		"few": func(i int) string { return fmt.Sprintf("10.0.0.%d:4000", (i/(1+i%7)*3)%5) },
		// names of 100 bytes in runs of 2: 1.6 MB of them by the first
		// page's end (32,768 indexes in dataPageSize), too many for a
		// dictionary (maxDictBytes, 64 KiB): the row group's later pages
		// are plain
		"many": func(i int) string { return fmt.Sprintf("h%099d", i/2) },
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
// page, and every data page dictionary-encoded (dict) or some plain after
// the first page when the row group has more than one, and each row group's and data page's
// minimum, maximum and counts against value(row).
func checkStrStats(t *testing.T, path, name string, dict bool, value func(row int) string) {
	t.Helper()
	pf := openPart(t, path)
	leaf, ok := pf.Schema().Lookup(name)
	if !ok {
		t.Fatalf("no column %s", name)
	}
	col := leaf.ColumnIndex
	minMax := func(from, to int) (string, string) {
		lo, hi := value(from), value(from)
		for i := from; i < to; i++ {
			lo, hi = min(lo, value(i)), max(hi, value(i))
		}
		return lo, hi
	}
	md := pf.Metadata()
	ncols := len(md.RowGroups[0].Columns)
	row := 0
	for g, rg := range md.RowGroups {
		n := int(rg.NumRows)
		cc := rg.Columns[col].MetaData
		plain := false
		for _, es := range cc.EncodingStats {
			if es.PageType == format.DataPage && es.Encoding == format.Plain {
				plain = true
			}
		}
		if wantPlain := !dict && n > dataPageSize/4; plain != wantPlain || cc.DictionaryPageOffset == 0 {
			t.Errorf("%s row group %d: plain data pages %v, dictionary page at %d; want a dictionary %v (%v)", name, g, plain, cc.DictionaryPageOffset, dict, cc.EncodingStats)
		}
		st := cc.Statistics
		lo, hi := minMax(row, row+n)
		if string(st.MinValue) != lo || string(st.MaxValue) != hi || st.NullCount != 0 || cc.NumValues != int64(n) {
			t.Errorf("%s row group %d: min %q max %q nulls %d values %d, want %q %q 0 %d", name, g,
				st.MinValue, st.MaxValue, st.NullCount, cc.NumValues, lo, hi, n)
		}
		ci, oi := pf.ColumnIndexes()[g*ncols+col], pf.OffsetIndexes()[g*ncols+col]
		locs := oi.PageLocations
		for k := range locs {
			from, to := int(locs[k].FirstRowIndex), n
			if k+1 < len(locs) {
				to = int(locs[k+1].FirstRowIndex)
			}
			lo, hi := minMax(row+from, row+to)
			pmin, pmax := string(ci.MinValues[k]), string(ci.MaxValues[k])
			if exact := len(hi) <= 16; pmin > lo || pmax < hi || exact && (pmin != lo || pmax != hi) {
				t.Errorf("%s row group %d page at row %d: min %q max %q, want %q %q", name, g, from, pmin, pmax, lo, hi)
			}
		}
		if len(locs) == 0 || locs[0].FirstRowIndex != 0 {
			t.Errorf("%s row group %d: pages %v", name, g, locs)
		}
		row += n
	}
	if row != int(pf.NumRows()) {
		t.Errorf("%d rows in row groups of %d", pf.NumRows(), row)
	}
}
