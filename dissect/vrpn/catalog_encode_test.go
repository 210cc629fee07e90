package vrpn

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestCatalogueEncodes holds the encoder the catalogue's descriptions
// give (layout's Plan.Append) to the test encoders written from
// mainline's encode functions (catalogueSamples): each sample's body,
// decoded by its description and encoded again, is the same bytes (up to
// the stale bytes a sender leaves after the body, and, in a text buffer,
// the bytes after the NUL, which the encoder writes as zeros), and
// decodes to the same fields.
func TestCatalogueEncodes(t *testing.T) {
	dec := catalogPlan.NewDecoder()
	checked := 0
	for _, s := range catalogueSamples() {
		d := catalogued[s.name]
		if d.decode != nil {
			continue // not decoded by its layout
		}
		var r dissect.Record
		n, err := dec.Decode(&r, d.typ, s.body)
		if err != nil {
			if d.textN > 0 && len(s.body) < int(catalogPlan.MinSize(d.typ)) {
				continue // a text buffer cut after its NUL: the layout reads it whole only when padded
			}
			t.Fatalf("%s: decode: %v", s.name, err)
		}
		got, err := catalogPlan.Append(nil, d.typ, r.Fields)
		if err != nil {
			t.Fatalf("%s: encode: %v", s.name, err)
		}
		want := bytes.Clone(s.body[:n])
		for _, k := range d.texts { // the bytes after a text's NUL: zeros
			at := textOffset(t, d, k)
			size := int(d.body[k].Size.N)
			if i := bytes.IndexByte(want[at:at+size], 0); i >= 0 {
				clear(want[at+i : at+size])
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: encoded\n % x\nwant\n % x", s.name, got, want)
		}
		var again dissect.Record
		if _, err := dec.Decode(&again, d.typ, got); err != nil || !reflect.DeepEqual(bodyJSON(&again), bodyJSON(&r)) {
			t.Errorf("%s: the encoding decodes to %v (%v), want %v", s.name, bodyJSON(&again), err, bodyJSON(&r))
		}
		checked++
	}
	if checked < 80 {
		t.Errorf("%d samples checked, want every catalogued type's decoded by its layout", checked)
	}
}

// textOffset is where the text buffer k of d's body starts: its fields
// before it are of fixed size (the catalogue's text buffers all are).
func textOffset(t *testing.T, d *msgDef, k int) int {
	t.Helper()
	if k == len(d.body)-1 {
		return int(catalogPlan.MinSize(d.typ)) - int(d.body[k].Size.N)
	}
	if d.name == "vrpn_Sound Load_Material" && k == 1 {
		return 4 // after material_id
	}
	t.Fatalf("%s: no offset known for text buffer %d", d.name, k)
	return 0
}
