package neptune

import (
	"bytes"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestWikiDescriptionEncodes: the one description's encoder gives back
// the bytes of every well-formed packet of the shipped captures (written
// by the separate encoder internal/testenc/neptuneenc) from the fields its
// decoder reads, in both int widths: decoder and encoder agree on where
// every field sits.
func TestWikiDescriptionEncodes(t *testing.T) {
	for file, int16 := range map[string]bool{"neptune_wiki": false, "neptune_wiki_int16": true} {
		w := NewWiki(WikiOptions{Int16: int16}).(*wiki)
		dec := w.plan.NewDecoder()
		for _, m := range dissecttest.CleanWires(t, "../../pcaps/"+file+".truth.json") {
			typ := w.types[m.Bytes[0]]
			if w.plan.Name(typ) != m.Type {
				t.Errorf("%s: % x is %s, the truth says %s", file, m.Bytes, w.plan.Name(typ), m.Type)
				continue
			}
			r := &dissect.Record{Type: m.Type}
			if n, err := dec.Decode(r, typ, m.Bytes); err != nil || n != len(m.Bytes) || len(r.Warnings) > 0 {
				t.Errorf("%s: % x: Decode = %d, %v %q", file, m.Bytes, n, err, r.Warnings)
				continue
			}
			// the type byte is not recorded: the encoder writes 0 there
			out, err := w.plan.Append(nil, typ, r.Fields)
			if err != nil || len(out) == 0 || !bytes.Equal(out[1:], m.Bytes[1:]) {
				t.Errorf("%s: % x: Append = % x, %v", file, m.Bytes, out, err)
			}
		}
	}
}

// TestDeviceFraming: the device framing frames every well-formed message
// of the shipped session whole, Seal writes its length byte back, and a
// length of 100 or more is refused as the device refuses it.
func TestDeviceFraming(t *testing.T) {
	d := New().(device)
	for _, m := range dissecttest.CleanWires(t, "../../pcaps/neptune_session.truth.json") {
		if n, err := d.fr.Frame(m.Bytes); n != len(m.Bytes) || err != nil {
			t.Errorf("Frame(% x) = %d, %v", m.Bytes, n, err)
		}
		frame := append([]byte{0xee}, m.Bytes[1:]...)
		if err := d.fr.Seal(frame); err != nil || !bytes.Equal(frame, m.Bytes) {
			t.Errorf("Seal(% x) = % x, %v", m.Bytes, frame, err)
		}
	}
	for _, l := range []byte{99, 100, 255} {
		b := make([]byte, 300)
		b[0] = l
		n, err := d.fr.Frame(b)
		if l < maxLen && (n != int(l)+1 || err != nil) || l >= maxLen && err == nil {
			t.Errorf("length %d: Frame = %d, %v", l, n, err)
		}
	}
}
