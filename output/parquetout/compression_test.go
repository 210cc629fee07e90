package parquetout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// TestCompression: every column chunk of a part is compressed with the
// writer's codec (snappy by default), another writer in the same process
// keeps its own, and a codec not offered is refused.
func TestCompression(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{{Name: "x", Kind: dissect.KindFloat}}}
	for _, c := range []struct {
		opt  string
		want format.CompressionCodec
	}{
		{"", format.Snappy}, {"zstd", format.Zstd}, {"snappy", format.Snappy},
		{"gzip", format.Gzip}, {"none", format.Uncompressed},
	} {
		dir := t.TempDir()
		w, err := New(dir, Options{Compression: c.opt, Decl: declOf(d)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if err := w.Record(rec("t", "x", dissect.Float(float64(i)))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		pf := openPart(t, onlyFile(t, dir, "proto=p/type=t"))
		for i, cc := range pf.Metadata().RowGroups[0].Columns {
			if got := cc.MetaData.Codec; got != c.want {
				t.Errorf("%q: column %d compressed with %s, want %s", c.opt, i, got, c.want)
			}
		}
		if _, rows := readRows(t, onlyFile(t, dir, "proto=p/type=t")); len(rows) != 100 || rows[99]["x"] != 99.0 {
			t.Errorf("%q: %d rows read back", c.opt, len(rows))
		}
	}
	for _, bad := range []string{"lz4", "ZSTD", "brotli"} {
		if _, err := New(t.TempDir(), Options{Compression: bad}); err == nil || !strings.Contains(err.Error(), "snappy, zstd, gzip, none") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestEncodings: the common INT64 columns are DELTA_BINARY_PACKED, the
// common string columns dictionaries, the others (a declared string, a
// list of strings, extra_json) plain, as Spark before 3.3 reads them all
// but DELTA_BINARY_PACKED; data pages are version 1.
func TestEncodings(t *testing.T) {
	d := &dissect.TypeDecl{Type: "t", Fields: []dissect.FieldDecl{{Name: "s", Kind: dissect.KindString}, {Name: "x", Kind: dissect.KindFloat}}}
	dir := t.TempDir()
	w, err := New(dir, Options{Decl: declOf(d)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.Record(rec("t", "s", dissect.Str(fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"time": "DELTA_BINARY_PACKED", "frame": "DELTA_BINARY_PACKED", "stream": "DELTA_BINARY_PACKED", "offset": "DELTA_BINARY_PACKED", "length": "DELTA_BINARY_PACKED",
		"transport": "RLE_DICTIONARY", "src": "RLE_DICTIONARY", "dst": "RLE_DICTIONARY", "capture": "RLE_DICTIONARY",
		"s": "PLAIN", "x": "PLAIN", "warnings.list.element": "PLAIN", "extra_json": "PLAIN",
	}
	pf := openPart(t, onlyFile(t, dir, "proto=p/type=t"))
	for _, cc := range pf.Metadata().RowGroups[0].Columns {
		name := strings.Join(cc.MetaData.PathInSchema, ".")
		var data []string
		for _, es := range cc.MetaData.EncodingStats {
			if es.PageType != format.DictionaryPage {
				if es.PageType != format.DataPage {
					t.Errorf("%s: a %s", name, es.PageType)
				}
				data = append(data, es.Encoding.String())
			}
		}
		if got := strings.Join(data, ","); got != want[name] {
			t.Errorf("%s: data pages %s, want %s", name, got, want[name])
		}
		delete(want, name)
	}
	if len(want) > 0 {
		t.Errorf("no columns %v", want)
	}
}

// TestFastSnappyIsSnappy: the default codec's blocks are standard snappy
// (no s2 extension): the strict decoder, which refuses what the C++
// reference decoder refuses, gives back every input, from empty to
// pages of repeats and of noise.
func TestFastSnappyIsSnappy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noise := make([]byte, 600<<10)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	floats := make([]byte, 0, 512<<10)
	for i := 0; len(floats) < cap(floats); i++ { // a column of values that come back
		floats = binary.LittleEndian.AppendUint32(floats, math.Float32bits(float32(i%97)/7))
	}
	inputs := [][]byte{nil, []byte("a"), bytes.Repeat([]byte("192.0.2.1:4000"), 40000), noise, floats,
		append(bytes.Repeat([]byte{0}, 100000), noise[:70000]...)}
	var c fastSnappy
	for i, in := range inputs {
		enc, err := c.Encode(nil, in)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := snappy.DecodeStrict(nil, enc)
		if err != nil || !bytes.Equal(dec, in) {
			t.Errorf("input %d (%d bytes): %v, %d bytes back", i, len(in), err, len(dec))
		}
	}
}
