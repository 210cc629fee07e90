package pbwalk

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestNext reads one field of each wire type. The inputs are the examples
// of the protobuf encoding guide (protobuf.dev/programming-guides/encoding)
// or follow its rules byte by byte.
func TestNext(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want Field
		next int
	}{
		{"varint 150 (guide)", "08 96 01", Field{Num: 1, Type: protowire.VarintType, Value: 150}, 3},
		{"varint 0", "08 00", Field{Num: 1, Type: protowire.VarintType}, 2},
		{"varint 10-byte max (2^64-1; int32 -1)", "08 ff ff ff ff ff ff ff ff ff 01", Field{Num: 1, Type: protowire.VarintType, Value: math.MaxUint64}, 11},
		{"varint overlong 0", "08 80 00", Field{Num: 1, Type: protowire.VarintType}, 3},
		{"varint overlong 1 in 10 bytes", "08 81 80 80 80 80 80 80 80 80 00", Field{Num: 1, Type: protowire.VarintType, Value: 1}, 11},
		{"zigzag -1 is varint 1", "28 01", Field{Num: 5, Type: protowire.VarintType, Value: 1}, 2},
		{"fixed32", "0d 01 02 03 04", Field{Num: 1, Type: protowire.Fixed32Type, Value: 0x04030201}, 5},
		{"fixed64", "09 01 02 03 04 05 06 07 08", Field{Num: 1, Type: protowire.Fixed64Type, Value: 0x0807060504030201}, 9},
		{"string (guide)", "12 07 74 65 73 74 69 6e 67", Field{Num: 2, Type: protowire.BytesType, Bytes: []byte("testing")}, 9},
		{"embedded message (guide)", "1a 03 08 96 01", Field{Num: 3, Type: protowire.BytesType, Bytes: h("08 96 01")}, 5},
		{"packed (guide)", "32 06 03 8e 02 9e a7 05", Field{Num: 6, Type: protowire.BytesType, Bytes: h("03 8e 02 9e a7 05")}, 8},
		{"empty bytes", "12 00", Field{Num: 2, Type: protowire.BytesType, Bytes: []byte{}}, 2},
		{"group", "0b 10 05 0c", Field{Num: 1, Type: protowire.StartGroupType, Bytes: h("10 05")}, 4},
		{"empty group", "0b 0c", Field{Num: 1, Type: protowire.StartGroupType, Bytes: []byte{}}, 2},
		{"nested groups", "0b 13 14 0c", Field{Num: 1, Type: protowire.StartGroupType, Bytes: h("13 14")}, 4},
		{"two-byte tag, field 16", "80 01 07", Field{Num: 16, Type: protowire.VarintType, Value: 7}, 3},
		{"largest field number of .proto files", "f8 ff ff ff 0f 01", Field{Num: protowire.MaxValidNumber, Type: protowire.VarintType, Value: 1}, 6},
		{"field number 2^29 (accepted, as by protowire)", "80 80 80 80 10 01", Field{Num: 1 << 29, Type: protowire.VarintType, Value: 1}, 6},
		{"field number 2^31-1", "f8 ff ff ff 3f 01", Field{Num: math.MaxInt32, Type: protowire.VarintType, Value: 1}, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := h(c.in)
			got, next, err := Next(b, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got.Num != c.want.Num || got.Type != c.want.Type || got.Value != c.want.Value || !bytes.Equal(got.Bytes, c.want.Bytes) || next != c.next {
				t.Fatalf("got %+v next %d, want %+v next %d", got, next, c.want, c.next)
			}
			if (got.Bytes == nil) != (c.want.Bytes == nil) {
				t.Fatalf("Bytes nil %v, want nil %v", got.Bytes == nil, c.want.Bytes == nil)
			}
		})
	}
}

// TestNextBytesAlias: values are sub-slices of the input, not copies.
func TestNextBytesAlias(t *testing.T) {
	b := h("12 03 61 62 63")
	f, _, err := Next(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if &f.Bytes[0] != &b[2] {
		t.Fatal("Bytes is a copy")
	}
}

// errorCase is bytes that are not wire data: the error expected, its
// offset and reason.
type errorCase struct {
	name   string
	in     []byte
	kind   error
	off    int
	reason string
}

// errorCases are every way bytes fail.
func errorCases() []errorCase {
	tooDeep := cat(bytes.Repeat([]byte{0x0b}, MaxDepth+1), bytes.Repeat([]byte{0x0c}, MaxDepth+1))
	return []errorCase{
		{"empty tag at end", h("08 01 80"), ErrTruncated, 2, "truncated tag"},
		{"truncated tag", h("80"), ErrTruncated, 0, "truncated tag"},
		{"field number 0", h("00"), ErrMalformed, 0, "field number 0"},
		{"field number 0 with a wire type", h("02 00"), ErrMalformed, 0, "field number 0"},
		{"field number 2^31", h("80 80 80 80 40 01"), ErrMalformed, 0, "invalid tag"},
		{"tag over 64 bits", h("ff ff ff ff ff ff ff ff ff 7f"), ErrMalformed, 0, "invalid tag"},
		{"wire type 6", h("0e"), ErrMalformed, 0, "invalid wire type 6"},
		{"wire type 7", h("08 01 0f"), ErrMalformed, 2, "invalid wire type 7"},
		{"end group alone", h("0c"), ErrMalformed, 0, "end-group tag without a group"},
		{"truncated varint", h("08 80"), ErrTruncated, 1, "truncated varint"},
		{"varint without its byte", h("08"), ErrTruncated, 1, "truncated varint"},
		{"varint 10th byte 2", h("08 ff ff ff ff ff ff ff ff ff 02"), ErrMalformed, 1, "varint over 64 bits"},
		{"varint of 11 bytes", h("08 80 80 80 80 80 80 80 80 80 80 00"), ErrMalformed, 1, "varint over 64 bits"},
		{"truncated fixed32", h("0d 01 02 03"), ErrTruncated, 1, "truncated fixed32"},
		{"truncated fixed64", h("09 01 02 03 04 05 06 07"), ErrTruncated, 1, "truncated fixed64"},
		{"lying length", h("0a 05 01 02"), ErrTruncated, 1, "length 5 runs past the end"},
		{"length 2^64-1", h("0a ff ff ff ff ff ff ff ff ff 01 00"), ErrTruncated, 1, "length 18446744073709551615 runs past the end"},
		{"length 2^31", h("0a 80 80 80 80 08 00"), ErrTruncated, 1, "length 2147483648 runs past the end"},
		{"truncated length", h("0a 80"), ErrTruncated, 1, "truncated varint"},
		{"length overflows the nested value", h("0b 0a 09 0c"), ErrTruncated, 2, "length 9 runs past the end"},
		{"group without end", h("0b 08 01"), ErrTruncated, 3, "group 1 has no end"},
		{"group closed by another number", h("0b 08 01 14"), ErrMalformed, 3, "end-group tag of field 2 closes group 1"},
		{"inner group unclosed", h("0b 13 0c"), ErrMalformed, 2, "end-group tag of field 1 closes group 2"},
		{"bad field inside a group", h("0b 00 0c"), ErrMalformed, 1, "field number 0"},
		{"groups nested too deep", tooDeep, ErrLimit, MaxDepth + 1, "groups nested too deep"},
	}
}

// TestErrors: every way bytes fail, with the offset and the sentinel.
func TestErrors(t *testing.T) {
	for _, c := range errorCases() {
		t.Run(c.name, func(t *testing.T) {
			var err error
			for off := 0; off < len(c.in) && err == nil; {
				_, off, err = Next(c.in, off)
			}
			checkErr(t, err, c.kind, c.off, c.reason)
			// Walk stops at the same error, and so does Decode, raw or with
			// a message that lacks every field.
			checkErr(t, Walk(c.in, func(int, Field) bool { return true }), c.kind, c.off, c.reason)
			var d Decoder
			for _, m := range []*Message{nil, EmptyMessage("e")} {
				fields, _, _, err := d.Decode(nil, m, c.in, false)
				checkErr(t, err, c.kind, c.off, c.reason)
				if fields != nil {
					t.Fatal("fields on error")
				}
			}
		})
	}
}

func checkErr(t *testing.T, err, kind error, off int, reason string) {
	t.Helper()
	var we *Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v, want an *Error", err)
	}
	if !errors.Is(err, kind) || we.Offset != off || we.Reason != reason {
		t.Fatalf("error %v (offset %d, kind %v), want %q at %d (%v)", err, we.Offset, errors.Unwrap(err), reason, off, kind)
	}
	if want := "pbwalk: " + reason + " at offset "; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Error() = %q", err.Error())
	}
}

// TestNextOffsets: Next at an offset out of range fails without
// panicking; at the end it reports a truncated tag.
func TestNextOffsets(t *testing.T) {
	b := h("08 01")
	for _, off := range []int{-1, 3, math.MaxInt} {
		_, _, err := Next(b, off)
		var we *Error
		if !errors.As(err, &we) || !errors.Is(err, ErrMalformed) || we.Offset < 0 || we.Offset > len(b) {
			t.Errorf("offset %d: %v", off, err)
		}
	}
	_, _, err := Next(b, 2)
	checkErr(t, err, ErrTruncated, 2, "truncated tag")
}

// TestGroupDepth: groups nest up to MaxDepth levels.
func TestGroupDepth(t *testing.T) {
	body := []byte{}
	for range MaxDepth {
		body = tagg(1, body)
	}
	f, next, err := Next(body, 0)
	if err != nil || next != len(body) || f.Type != protowire.StartGroupType || len(f.Bytes) != len(body)-2 {
		t.Fatalf("%d nested groups: %+v %d %v", MaxDepth, f, next, err)
	}
}

// encoded is one field written by protowire, with where it starts and ends.
type encoded struct {
	f          Field
	start, end int
}

// sample is a message with every wire type, built with protowire, and the
// fields it holds.
func sample() ([]byte, []encoded) {
	parts := []struct {
		f    Field
		wire []byte
	}{
		{Field{Num: 1, Type: protowire.VarintType, Value: 150}, tagv(1, 150)},
		{Field{Num: 2, Type: protowire.BytesType, Bytes: []byte("testing")}, tags(2, "testing")},
		{Field{Num: 3, Type: protowire.BytesType, Bytes: tagv(1, 150)}, tagb(3, tagv(1, 150))},
		{Field{Num: 4, Type: protowire.Fixed32Type, Value: 0xdeadbeef}, tag32(4, 0xdeadbeef)},
		{Field{Num: 5, Type: protowire.Fixed64Type, Value: 1 << 63}, tag64(5, 1<<63)},
		{Field{Num: 6, Type: protowire.StartGroupType, Bytes: cat(tagv(1, 1), tagg(2, tags(3, "x")))}, tagg(6, cat(tagv(1, 1), tagg(2, tags(3, "x"))))},
		{Field{Num: 1000, Type: protowire.VarintType, Value: math.MaxUint64}, tagv(1000, math.MaxUint64)},
		{Field{Num: 7, Type: protowire.BytesType, Bytes: []byte{}}, tagb(7, nil)},
	}
	var b []byte
	var fs []encoded
	for _, p := range parts {
		fs = append(fs, encoded{p.f, len(b), len(b) + len(p.wire)})
		b = append(b, p.wire...)
	}
	return b, fs
}

// TestWalk reads back a message written by protowire, and stops when asked.
func TestWalk(t *testing.T) {
	b, want := sample()
	var got []encoded
	err := Walk(b, func(off int, f Field) bool {
		got = append(got, encoded{f: f, start: off})
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d fields, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.start != w.start || g.f.Num != w.f.Num || g.f.Type != w.f.Type || g.f.Value != w.f.Value || !bytes.Equal(g.f.Bytes, w.f.Bytes) {
			t.Errorf("field %d: %+v at %d, want %+v at %d", i, g.f, g.start, w.f, w.start)
		}
	}
	n := 0
	if err := Walk(b, func(int, Field) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Fatalf("stopped after %d fields, %v", n, err)
	}
}

// TestTruncation cuts a valid message at every byte: a cut at a field
// boundary walks the fields before it; any other cut is ErrTruncated at an
// offset within the cut field. The same holds for Decode, raw and with a
// message.
func TestTruncation(t *testing.T) {
	msgs := compileTest(t)
	b, fs := sample()
	for k := range len(b) {
		cut := b[:k]
		boundary := slices.ContainsFunc(fs, func(e encoded) bool { return e.start == k })
		var field encoded
		for _, e := range fs {
			if e.start < k && k < e.end {
				field = e
			}
		}
		n := 0
		err := Walk(cut, func(int, Field) bool { n++; return true })
		var d Decoder
		_, _, _, errRaw := d.Decode(nil, nil, cut, false)
		_, _, _, errAll := d.Decode(nil, msgs["t.All"], cut, false)
		for _, err := range []error{err, errRaw, errAll} {
			if boundary {
				if err != nil {
					t.Fatalf("cut at %d (a boundary): %v", k, err)
				}
				continue
			}
			var we *Error
			if !errors.Is(err, ErrTruncated) || !errors.As(err, &we) || we.Offset < field.start || we.Offset > k {
				t.Fatalf("cut at %d inside [%d,%d): %v", k, field.start, field.end, err)
			}
		}
		if boundary && n != slices.IndexFunc(fs, func(e encoded) bool { return e.start == k }) {
			t.Fatalf("cut at %d: %d fields", k, n)
		}
	}
}
