package framing

import (
	"errors"
	"testing"

	"github.com/dissect-tools/dissect/dissect/layout"
)

// The check values of "123456789" are the CRC catalogue's (Greg Cook's
// "Catalogue of parametrised CRC algorithms", the "check" column), and
// Fletcher-16 of "abcde" is the worked example of its Wikipedia article:
// none comes from this code.
func TestCRCCatalogue(t *testing.T) {
	in := []byte("123456789")
	cases := []struct {
		name string
		c    CRC
		want uint64
	}{
		{"crc-8", mustPreset("crc-8"), 0xf4},
		{"crc-8/maxim", mustPreset("crc-8/maxim"), 0xa1},
		{"crc-16/arc", mustPreset("crc-16/arc"), 0xbb3d},
		{"crc-16/ibm-3740", mustPreset("crc-16/ibm-3740"), 0x29b1},
		{"crc-16/xmodem", mustPreset("crc-16/xmodem"), 0x31c3},
		{"crc-16/kermit", mustPreset("crc-16/kermit"), 0x2189},
		{"crc-16/modbus", mustPreset("crc-16/modbus"), 0x4b37},
		{"crc-16/mcrf4xx", mustPreset("crc-16/mcrf4xx"), 0x6f91},
		{"crc-32", mustPreset("crc-32"), 0xcbf43926},
		{"crc-32c", mustPreset("crc-32c"), 0xe3069283},
		{"crc-3/gsm", CRC{Width: 3, Poly: 0x3, XorOut: 0x7}, 0x4},
		{"crc-4/interlaken", CRC{Width: 4, Poly: 0x3, Init: 0xf, XorOut: 0xf}, 0xb},
		{"crc-5/usb", CRC{Width: 5, Poly: 0x05, Init: 0x1f, RefIn: true, RefOut: true, XorOut: 0x1f}, 0x19},
		{"crc-7/mmc", CRC{Width: 7, Poly: 0x09}, 0x75},
		{"crc-12/umts", CRC{Width: 12, Poly: 0x80f, RefOut: true}, 0xdaf},
		{"crc-24/openpgp", CRC{Width: 24, Poly: 0x864cfb, Init: 0xb704ce}, 0x21cf02},
		{"crc-64/xz", CRC{Width: 64, Poly: 0x42f0e1eba9ea3693, Init: ^uint64(0), RefIn: true, RefOut: true, XorOut: ^uint64(0)}, 0x995dc9bbdf1939fa},
		{"crc-64/ecma-182", CRC{Width: 64, Poly: 0x42f0e1eba9ea3693}, 0x6c40df5f0b497347},
	}
	for _, c := range cases {
		if err := c.c.validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := newCRCTable(c.c).sum(in); got != c.want {
			t.Errorf("%s(123456789) = 0x%x, want 0x%x", c.name, got, c.want)
		}
	}
	if got := sumOf(Fletcher16, []byte("abcde")); got != 0xc8f0 {
		t.Errorf("fletcher16(abcde) = 0x%x, want 0xc8f0", got)
	}
	// by hand: 01 02: sum 3; neg 0xfd; xor 3; RFC 1145: A = 1, 3; B = 1, 4
	for k, want := range map[CheckKind]uint64{Sum8: 3, Sum8Neg: 0xfd, Xor8: 3, Fletcher8: 0x0304} {
		if got := sumOf(k, []byte{1, 2}); got != want {
			t.Errorf("check %d of 01 02 = 0x%x, want 0x%x", k, got, want)
		}
	}
}

func mustPreset(name string) CRC {
	c, ok := CRCPreset(name)
	if !ok {
		panic(name)
	}
	return c
}

// uartFraming: a5 5a, length (payload bytes) at offset 2, then id,
// payload, CRC-16/IBM-3740 little-endian over length..payload.
func uartFraming(t *testing.T) *Framer {
	fr, err := New(Framing{Sync: []byte{0xa5, 0x5a},
		Length: &Length{Offset: 2, Width: 1, Adjust: 6},
		Check:  &Check{Kind: CRCCheck, CRC: mustPreset("crc-16/ibm-3740"), From: 2, To: -2, At: -2, Order: layout.LittleEndian}})
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func TestFrameAndSeal(t *testing.T) {
	fr := uartFraming(t)
	// crc-16/ibm-3740 of 01 07 aa = 0x... computed by Seal; checked by
	// Verify in the other direction, and by the catalogue test above.
	frame := []byte{0xa5, 0x5a, 1, 7, 0xaa, 0, 0}
	if err := fr.Seal(frame); err != nil {
		t.Fatal(err)
	}
	if frame[2] != 1 {
		t.Errorf("length %d, want 1", frame[2])
	}
	if n, err := fr.Frame(frame); n != 7 || err != nil {
		t.Fatalf("Frame = %d, %v", n, err)
	}
	if n, err := fr.Frame(frame[:5]); n != 7 || !errors.Is(err, ErrShort) {
		t.Errorf("short: %d, %v", n, err)
	}
	if _, err := fr.Frame(frame[:1]); !errors.Is(err, ErrShort) {
		t.Errorf("half a sync word: %v", err)
	}
	bad := append([]byte(nil), frame...)
	bad[4] ^= 1
	var b *Bad
	if _, err := fr.Frame(bad); !errors.As(err, &b) || b.Offset != 5 {
		t.Errorf("corrupt: %v", err)
	}
	if _, err := fr.Frame([]byte{0xa5, 0x5b}); !errors.As(err, &b) {
		t.Errorf("no sync: %v", err)
	}
}

func TestResync(t *testing.T) {
	fr := uartFraming(t)
	frame := []byte{0xa5, 0x5a, 1, 7, 0xaa, 0, 0}
	_ = fr.Seal(frame)
	f := func(b []byte) (int, error) { return fr.Frame(b) }
	// garbage holding a false sync word and a frame with a broken CRC
	broken := append([]byte(nil), frame...)
	broken[6] ^= 0xff
	in := append([]byte{0x00, 0xa5, 0x5a, 0x09}, broken...)
	in = append(in, frame...)
	i, ok := fr.Resync(in, false, f)
	if !ok || i != 4+len(broken) {
		t.Errorf("Resync = %d, %v; want %d", i, ok, 4+len(broken))
	}
	// a frame not yet whole: wait at it
	i, ok = fr.Resync(in[:len(in)-2], false, f)
	if ok || i != 4+len(broken) {
		t.Errorf("partial: %d, %v", i, ok)
	}
	// ... unless no byte will follow
	i, ok = fr.Resync(in[:len(in)-2], true, f)
	if ok || i != len(in)-2 {
		t.Errorf("partial, last: %d, %v", i, ok)
	}
	// a tail that may start the sync word is kept
	i, ok = fr.Resync([]byte{1, 2, 3, 0xa5}, false, f)
	if ok || i != 3 {
		t.Errorf("tail: %d, %v", i, ok)
	}
}

func TestNewErrors(t *testing.T) {
	cases := map[string]Framing{
		"check.crc":   {Size: 8, Check: &Check{Kind: CRCCheck, CRC: CRC{Width: 65, Poly: 1}}},
		"length.type": {Length: &Length{Width: 9}},
		"check":       {Check: &Check{Kind: Sum8}},
		"check.at":    {Size: 4, Check: &Check{Kind: Fletcher16, At: -1}},
		"size":        {Size: 2, Sync: []byte{1, 2, 3}},
		"max":         {Max: 1 << 30},
	}
	for key, f := range cases {
		_, err := New(f)
		var e *Error
		if !errors.As(err, &e) || e.Key != key {
			t.Errorf("%s: %v", key, err)
		}
	}
}
