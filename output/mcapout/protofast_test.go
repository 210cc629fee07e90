package mcapout

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/output"
	"google.golang.org/protobuf/encoding/protowire"
)

// flatAgrees checks that appendFlatFields writes fs as appendPBFields does
// when it takes them, and leaves b as it was when it does not; it returns
// whether it took them.
func flatAgrees(t testing.TB, what string, fs []dissect.Field, p *pbRecord) bool {
	t.Helper()
	prefix := []byte{0xa5}
	general := appendPBFields(prefix, fs, p.fields)
	flat, ok := appendFlatFields(append([]byte(nil), prefix...), fs, p.flat)
	switch {
	case ok && !bytes.Equal(flat, general):
		t.Errorf("%s: flat % x, general % x", what, flat, general)
	case !ok && !bytes.Equal(flat, prefix):
		t.Errorf("%s: declined, but left % x", what, flat)
	}
	return ok
}

// The flat plan writes every record of every shipped capture that it
// takes as the general encoder does, and takes the records of the types
// whose fields are all scalars.
func TestFlatFieldsAgree(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../pcaps/*.pcap", "../../pcaps/*.pcapng", "../../pcaps/vrpn/*.pcap", "../../dissect/vrpn/testdata/*.pcap*"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("%d shipped captures found", len(files))
	}
	if testing.Short() {
		files = files[:3]
	}
	flat, total, planned := 0, 0, 0
	for _, file := range files {
		c := dissecttest.ReadCapture(t, file)
		protos, err := all.Protocols(all.Options{NeptuneInt16: c.NeptuneInt16})
		if err != nil {
			t.Fatal(err)
		}
		reg := dissecttest.Registry(t, c.Rules(), protos...)
		plans := map[*dissect.TypeDecl]*pbRecord{}
		for _, r := range dissecttest.Decode(t, reg, file) {
			d := reg.Decl(r)
			if d == nil {
				continue
			}
			p, ok := plans[d]
			if !ok {
				p = newPBRecord(d, channelKeys(d, false))
				plans[d] = p
			}
			total++
			if p.flat == nil {
				continue
			}
			planned++
			if flatAgrees(t, c.Name()+" "+r.Type, r.Fields, p) {
				flat++
			} else {
				t.Logf("%s: a %s record the plan does not take: %v", c.Name(), r.Type, r.Fields)
			}
		}
	}
	t.Logf("%d records of %d captures: %d of types with a flat plan, %d written by it", total, len(files), planned, flat)
	if flat == 0 || flat < planned*9/10 {
		t.Errorf("the flat plan took %d of the %d records of types it plans", flat, planned)
	}
}

// FuzzFlatFieldsAgree builds records of a declaration of every scalar
// kind from the input: fields in any order, repeated, undeclared, of
// another kind than declared, with any value, and holds the flat plan to
// the general encoder on each.
func FuzzFlatFieldsAgree(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6}, uint64(1<<63+5), "caf\xe9")
	f.Add([]byte{3, 3, 2, 2, 7, 0}, uint64(0), "")
	f.Add([]byte{0, 1, 1, 0}, uint64(math.MaxUint64), "ok")
	decl := &dissect.TypeDecl{Type: "s", Fields: []dissect.FieldDecl{
		{Name: "i", Kind: dissect.KindInt}, {Name: "u", Kind: dissect.KindUint},
		{Name: "f", Kind: dissect.KindFloat}, {Name: "f32", Kind: dissect.KindFloat32},
		{Name: "b", Kind: dissect.KindBool}, {Name: "s", Kind: dissect.KindString},
		{Name: "raw", Kind: dissect.KindBytes},
	}}
	keys := []string{"i", "u", "f", "f32", "b", "s", "raw", "other"}
	p := newPBRecord(decl, nil)
	if p.flat == nil {
		f.Fatal("no flat plan for a declaration of scalars")
	}
	f.Fuzz(func(t *testing.T, ops []byte, n uint64, s string) {
		var fs []dissect.Field
		for i := 0; i+1 < len(ops) && len(fs) < 32; i += 2 {
			key := keys[int(ops[i])%len(keys)]
			v := n ^ uint64(i)*0x9e3779b97f4a7c15
			var val dissect.Value
			switch ops[i+1] % 8 {
			case 0:
				val = dissect.Int(int64(v))
			case 1:
				val = dissect.Uint(v)
			case 2:
				val = dissect.Float(math.Float64frombits(v))
			case 3:
				val = dissect.Float32(math.Float32frombits(uint32(v)))
			case 4:
				val = dissect.Bool(v&1 == 1)
			case 5:
				val = dissect.Str(s[:min(len(s), int(v%64))])
			case 6:
				val = dissect.Bytes(binary.LittleEndian.AppendUint64([]byte(s), v))
			default:
				val = dissect.Value{}
			}
			fs = append(fs, dissect.Field{Key: key, Value: val})
		}
		flatAgrees(t, "fuzz", fs, p)
	})
}

// The flat plan takes a record of all its fields in declared order, and
// one that leaves some out; it declines one of a field undeclared, out of
// order, or of another kind, which the general encoder then writes.
func TestFlatFieldsDecline(t *testing.T) {
	decl := &dissect.TypeDecl{Type: "v", Fields: []dissect.FieldDecl{
		{Name: "x", Kind: dissect.KindFloat32}, {Name: "n", Kind: dissect.KindUint}, {Name: "s", Kind: dissect.KindString},
	}}
	p := newPBRecord(decl, nil)
	x, n, s := f("x", dissect.Float32(1.5)), f("n", dissect.Uint(300)), f("s", dissect.Str("a\xffb"))
	for _, c := range []struct {
		fs   []dissect.Field
		take bool
	}{
		{[]dissect.Field{x, n, s}, true},
		{[]dissect.Field{x, s}, true},
		{nil, true},
		{[]dissect.Field{x, f("y", dissect.Float32(2)), n}, false},
		{[]dissect.Field{n, x}, false},
		{[]dissect.Field{x, f("n", dissect.Int(3))}, false},
		{[]dissect.Field{x, f("s", dissect.Value{})}, false},
	} {
		if got := flatAgrees(t, "record", c.fs, p); got != c.take {
			t.Errorf("%v: taken %v, want %v", c.fs, got, c.take)
		}
	}
}

// TestAppendUTF8: a string not UTF-8 is written as -o json writes it (each
// bad byte U+FFFD), length-prefixed, also past one byte of length.
func TestAppendUTF8(t *testing.T) {
	for _, s := range []string{"", "ok", "caf\xe9", strings.Repeat("\xff", 50), strings.Repeat("a\xc3", 100)} {
		want := protowire.AppendString([]byte{7}, output.ValidUTF8(s))
		if got := appendUTF8([]byte{7}, s); !bytes.Equal(got, want) {
			t.Errorf("%q: % x, want % x", s, got, want)
		}
	}
}
