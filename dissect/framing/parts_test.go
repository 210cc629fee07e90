package framing

import (
	"errors"
	"testing"
)

// A frame: sync aa 55, a 1-byte length of the data (the frame is 4
// bytes more), the data, CRC-8 of the data in the last byte. The data
// "123456789" has the catalogue's check value 0xf4 for CRC-8.
func partsFramer(t *testing.T) *Framer {
	t.Helper()
	fr, err := New(Framing{
		Sync:   []byte{0xaa, 0x55},
		Length: &Length{Offset: 2, Width: 1, Adjust: 4},
		Check:  &Check{Kind: CRCCheck, CRC: mustPreset("crc-8"), From: 3, To: -1, At: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

func TestSize(t *testing.T) {
	fr := partsFramer(t)
	var bad *Bad
	cases := []struct {
		in    []byte
		n     int
		short bool
		bad   bool
	}{
		{[]byte{0xaa}, 0, true, false},
		{[]byte{0xaa, 0x55}, 0, true, false},
		{[]byte{0xaa, 0x55, 0x09}, 13, false, false}, // the size is known before the frame is whole
		{[]byte{0xaa, 0x55, 0x00, 0x00}, 4, false, false},
		{[]byte{0xaa, 0x54, 0x00}, 0, false, true},
		{[]byte{0x55}, 0, false, true},
	}
	for _, c := range cases {
		n, err := fr.Size(c.in)
		if n != c.n || errors.Is(err, ErrShort) != c.short || errors.As(err, &bad) != c.bad {
			t.Errorf("Size(% x) = %d, %v; want %d, short %v, bad %v", c.in, n, err, c.n, c.short, c.bad)
		}
	}
	fixed, err := New(Framing{Size: 5})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := fixed.Size(nil); n != 5 || err != nil {
		t.Errorf("fixed Size = %d, %v; want 5", n, err)
	}
}

func TestSums(t *testing.T) {
	fr := partsFramer(t)
	frame := append([]byte{0xaa, 0x55, 0x09}, "123456789\xf4"...)
	if have, want := fr.Sums(frame); have != 0xf4 || want != 0xf4 {
		t.Errorf("Sums = 0x%x, 0x%x; want 0xf4, 0xf4", have, want)
	}
	frame[len(frame)-1] = 0x17
	if have, want := fr.Sums(frame); have != 0x17 || want != 0xf4 {
		t.Errorf("Sums of a wrong check = 0x%x, 0x%x; want 0x17, 0xf4", have, want)
	}
	if fr.Verify(frame) == nil {
		t.Error("Verify accepted a wrong check")
	}
	if have, want := fr.Sums(frame[:2]); have != 0 || want != 0 {
		t.Errorf("Sums of 2 bytes = 0x%x, 0x%x; want 0, 0", have, want)
	}
}

func TestHunt(t *testing.T) {
	fr := partsFramer(t)
	cases := []struct {
		in    []byte
		at    int
		found bool
	}{
		{[]byte{0x01, 0xaa, 0x55, 0x00}, 1, true},
		{[]byte{0xaa, 0xaa, 0x55}, 1, true},
		{[]byte{0x01, 0x02, 0xaa}, 2, false}, // a partial sync word waits
		{[]byte{0x01, 0x02}, 2, false},
		{nil, 0, false},
	}
	for _, c := range cases {
		if at, found := fr.Hunt(c.in); at != c.at || found != c.found {
			t.Errorf("Hunt(% x) = %d, %v; want %d, %v", c.in, at, found, c.at, c.found)
		}
	}
	none, err := New(Framing{Size: 3})
	if err != nil {
		t.Fatal(err)
	}
	if at, found := none.Hunt([]byte{1, 2}); at != 0 || !found {
		t.Errorf("Hunt without a sync word = %d, %v; want 0, true", at, found)
	}
}
