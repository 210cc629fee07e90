package layout

import (
	"fmt"
	"slices"

	"github.com/dissect-tools/dissect/dissect"
)

// A bool is one byte: 0 is false, anything else true, as C reads a
// byte as a condition. A byte other than 0 or 1 is taken as true with a
// warning naming the record type, the field and the byte. With an enum,
// the bool is recorded as the name of 0 or 1 (a direction: 0 "reverse",
// 1 "forward"); the enum must name both.

// boolValue records the bool of raw in dst.
func (d *Decoder) boolValue(f *cfield, raw uint64, dst *dissect.Value) {
	if raw > 1 {
		d.r.Warnf("%s: %s byte 0x%02x is not 0 or 1, taken as true", d.r.Type, fieldName(f), raw)
		raw = 1
	}
	if f.enum != nil {
		dst.SetStr(f.enum[int64(raw)])
		return
	}
	*dst = dissect.Bool(raw == 1)
}

// checkBoolEnum reports an enum on a bool that does not name 0 and 1.
func checkBoolEnum(f *Field, m map[int64]string) error {
	if _, ok := m[0]; !ok {
		return errAt(f.At, "field %q: the enum of a bool names 0 and 1", f.ID)
	}
	if _, ok := m[1]; !ok {
		return errAt(f.At, "field %q: the enum of a bool names 0 and 1", f.ID)
	}
	return nil
}

// boolDecl declares a bool: KindBool, or with an enum the string of one
// of its two names (listed in Enum, sorted).
func boolDecl(f *cfield, d *dissect.FieldDecl) {
	if f.enum == nil {
		d.Kind = dissect.KindBool
		return
	}
	d.Kind = dissect.KindString
	d.Enum = []string{f.enum[0], f.enum[1]}
	slices.Sort(d.Enum)
}

// rawBool is the wire byte of a bool (or of one of its enum's names).
func rawBool(f *cfield, v dissect.Value) (uint64, error) {
	if f.enum == nil {
		if v.Bool() {
			return 1, nil
		}
		return 0, nil
	}
	switch s := v.Str(); s {
	case f.enum[1]:
		return 1, nil
	case f.enum[0]:
		return 0, nil
	default:
		return 0, fmt.Errorf("%q: %q is neither %q nor %q", f.id, s, f.enum[0], f.enum[1])
	}
}
