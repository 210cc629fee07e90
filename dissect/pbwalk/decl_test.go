package pbwalk

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// checkConforms checks that fields and raw, from a Decode with m, are as
// m.Decl and RawItemDecl declare them.
func checkConforms(t testing.TB, m *Message, fields, raw []dissect.Field) {
	t.Helper()
	decl, err := m.Decl(DeclOptions{})
	if err != nil {
		t.Fatal(err)
	}
	item := RawItemDecl()
	td := dissect.TypeDecl{Type: "x", Fields: []dissect.FieldDecl{
		{Name: "payload", Kind: dissect.KindObject, Fields: decl, Required: true},
		{Name: "raw", Kind: dissect.KindArray, Elem: &item},
	}}
	if err := dissect.Validate("test", []dissect.TypeDecl{td}); err != nil {
		t.Fatal(err)
	}
	rec := &dissect.Record{Type: "x"}
	rec.Add("payload", dissect.Object(fields))
	if raw != nil {
		if len(raw) == 0 {
			t.Fatal("an empty raw list, not nil")
		}
		rec.Add("raw", dissect.Array(raw))
	}
	if err := td.Check(rec); err != nil {
		t.Fatalf("%s: %v\n%s", m.Name(), err, show(dissect.Object(rec.Fields)))
	}
	// Every item has exactly one value.
	for _, it := range raw {
		n := 0
		for _, f := range it.Value.Items() {
			if f.Key == keyUint || f.Key == keyText || f.Key == keyBytes {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("raw item with %d values: %s", n, show(it.Value))
		}
	}
}

// declText renders declared fields compactly, for comparison:
// "a:int b:[string] c:{x:uint}", enums as "string(A|B)".
func declText(fs []dissect.FieldDecl) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.Name + ":" + declKind(&f))
		if f.Required {
			b.WriteString("!")
		}
	}
	return b.String()
}

func declKind(f *dissect.FieldDecl) string {
	switch f.Kind {
	case dissect.KindArray:
		return "[" + declKind(f.Elem) + "]"
	case dissect.KindObject:
		return "{" + declText(f.Fields) + "}"
	}
	if len(f.Enum) > 0 {
		return f.Kind.String() + "(" + strings.Join(f.Enum, "|") + ")"
	}
	return f.Kind.String()
}

// TestDecl declares the test schema's messages. The kinds are those of
// the table in Decl's documentation, written out by hand; child and kids
// (t.All inside t.All) and Simple.c are not declared.
func TestDecl(t *testing.T) {
	msgs := compileTest(t)
	color := "string(NEG|RED|GREEN|BLUE|BIG)"
	inner := "{a:int c:" + color + " w:string cs:[" + color + "]}"
	for name, want := range map[string]string{
		"t.All": "i32:int i64:int u32:uint u64:uint s32:int s64:int f32:uint f64:uint sf32:int sf64:int fl:float32 db:float64 " +
			"b:bool s:string by:bytes c:" + color + " ri32:[int] rs64:[int] rf32:[uint] rdb:[float64] rs:[string] " +
			"g:{a:int} m:[{key:string value:int}] w:string in:" + inner + " ins:[" + inner + "] big:uint",
		"t.Simple": "a:int b:string w:string i:" + inner,
		"t.Wrap":   "value:string",
	} {
		got, err := msgs[name].Decl(DeclOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s := declText(got); s != want {
			t.Errorf("%s:\n got  %s\n want %s", name, s, want)
		}
	}
	d, _ := msgs["t.All"].Decl(DeclOptions{})
	if f := d[0]; f.Doc != "field 1 (int32)" {
		t.Errorf("doc %q", f.Doc)
	}
	if f := d[len(d)-2]; f.Name != "ins" || f.Doc != "field 28 (t.Inner)" {
		t.Errorf("doc %q of %s", f.Doc, f.Name)
	}
	if s := declText(emptyDecl(t)); s != "" {
		t.Errorf("empty message declares %q", s)
	}
	item := RawItemDecl()
	if s := declKind(&item); s != "{parent:string! field:int! name:string wire_type:string(varint|fixed64|length-delimited|group|fixed32)! uint:uint text:string bytes:bytes}" {
		t.Errorf("raw item %s", s)
	}
}

// emptyDecl declares EmptyMessage.
func emptyDecl(t *testing.T) []dissect.FieldDecl {
	d, err := EmptyMessage("e").Decl(DeclOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeclOptions: units, and the bound on declared fields.
func TestDeclOptions(t *testing.T) {
	msgs := compileTest(t)
	d, err := msgs["t.Simple"].Decl(DeclOptions{Unit: func(m, f string) string {
		if m == "t.Inner" && f == "a" {
			return "ms"
		}
		return ""
	}})
	if err != nil || d[3].Fields[0].Unit != "ms" || d[0].Unit != "" {
		t.Fatalf("%v %+v", err, d)
	}
	// t.Simple declares 4 + 4 fields (and t.Inner's cs its items).
	if _, err := msgs["t.Simple"].Decl(DeclOptions{Max: 8}); err != nil {
		t.Fatalf("8 fields: %v", err)
	}
	if _, err := msgs["t.Simple"].Decl(DeclOptions{Max: 7}); err == nil || !strings.Contains(err.Error(), "t.Simple declares more than 7 fields") {
		t.Fatalf("7 fields: %v", err)
	}
}

// compileChain compiles messages D0 ... Dn, each holding the next as n (1)
// and an int32 a (2): a nesting that is not a message inside itself.
func compileChain(t testing.TB, n int) map[string]*Message {
	t.Helper()
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage t;\n")
	for i := range n + 1 {
		fmt.Fprintf(&b, "message D%d {\n", i)
		if i < n {
			fmt.Fprintf(&b, "  D%d n = 1;\n", i+1)
		}
		b.WriteString("  int32 a = 2;\n}\n")
	}
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"c.proto": b.String()}),
	}}
	files, err := c.Compile(context.Background(), "c.proto")
	if err != nil {
		t.Fatal(err)
	}
	bu := NewBuilder(BuildOptions{})
	out := map[string]*Message{}
	ms := files[0].Messages()
	for i := range ms.Len() {
		out[string(ms.Get(i).FullName())] = bu.Message(ms.Get(i))
	}
	return out
}

// TestMessageDepth: a message nested deeper than MaxDepth is shown raw,
// with an issue; at MaxDepth it is decoded.
func TestMessageDepth(t *testing.T) {
	chain := compileChain(t, MaxDepth+2)
	for _, levels := range []int{MaxDepth, MaxDepth + 1} {
		in := tagv(2, 1)
		want := obj(kv{"a", i64(1)})
		var raw []dissect.Value
		var warn []string
		for k := range levels {
			if k == 0 && levels > MaxDepth {
				// The innermost message, at depth 33, is shown raw.
				parent := strings.TrimSuffix(strings.Repeat("n.", MaxDepth), ".")
				raw = append(raw, leafv(parent, 1, "n", wLen, "text", str(string(in))))
				want = obj()
				warn = []string{fmt.Sprintf("t.D%d.n: messages nested deeper than 32; shown raw", MaxDepth)}
			}
			in = tagb(1, in)
			if k > 0 || levels <= MaxDepth {
				want = obj(kv{"n", want})
			}
		}
		var d Decoder
		var rec dissect.Record
		got, gotRaw, issues, err := d.Decode(&rec, chain["t.D0"], in, true)
		if err != nil || !dissect.Object(got).Equal(want) || !dissect.Array(gotRaw).Equal(arr(raw...)) || issues != len(warn) {
			t.Fatalf("%d levels: %v %d issues\n got  %s %s\n want %s %s", levels, err, issues, show(dissect.Object(got)), show(dissect.Array(gotRaw)), show(want), show(arr(raw...)))
		}
		checkWarningsExact(t, rec.Warnings, warn)
		checkConforms(t, chain["t.D0"], got, gotRaw)
	}
}

func checkWarningsExact(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings %q, want %q", got, want)
	}
}

// TestDeclStringWrapper: a wrapper is declared as a string wherever it
// is, repeated too.
func TestDeclStringWrapper(t *testing.T) {
	const src = `syntax = "proto3"; package w;
message U { string value = 1; }
message M { repeated U ids = 1; U id = 2; }`
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"w.proto": src}),
	}}
	files, err := c.Compile(context.Background(), "w.proto")
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(BuildOptions{StringWrappers: []protoreflect.FullName{"w.U"}})
	m := b.Message(files[0].Messages().ByName("M"))
	d, err := m.Decl(DeclOptions{})
	if err != nil || declText(d) != "ids:[string] id:string" {
		t.Fatalf("%v %s", err, declText(d))
	}
	var dec Decoder
	var rec dissect.Record
	in := cat(tagb(1, tags(1, "a")), tagb(1, nil), tagb(2, tags(1, "b")))
	fields, raw, issues, err := dec.Decode(&rec, m, in, true)
	if err != nil || issues != 0 || raw != nil || !dissect.Object(fields).Equal(obj(kv{"ids", arr(str("a"), str(""))}, kv{"id", str("b")})) {
		t.Fatalf("%v %d %s", err, issues, show(dissect.Object(fields)))
	}
	checkConforms(t, m, fields, raw)
}
