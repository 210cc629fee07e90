package layout

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

// DecodeError is bytes a type cannot be decoded from.
type DecodeError struct {
	Offset int // in the bytes given to Decode
	Msg    string
	// Short: the bytes end before the value does (more bytes might make
	// it whole); Need is then how many the value needs from the start of
	// the bytes given, when known (0: unknown).
	Short bool
	Need  int
	// Field is the id of the field of the type given to Decode that
	// could not be read ("" when it records nothing).
	Field string
}

func (e *DecodeError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Decoder decodes with one plan. It keeps scratch space between calls, so
// that a message costs no allocation but its text values; it is for one
// goroutine (one per stream).
type Decoder struct {
	p       *Plan
	r       *dissect.Record
	vals    []int64 // the integer values of the seqs being read, innermost last
	values  int     // values made by this Decode
	topN    int     // the slots of the last Decode's type: d.vals's array from 0
	fail    int     // the field of Decode's type that failed
	check   bool    // Check: values are not wanted
	scratch dissect.Value
}

// Raw returns the raw value of the integer field in slot k ([Plan.Slot])
// of the type the last Decode read whole.
func (d *Decoder) Raw(k int) int64 {
	if k < d.topN {
		return d.vals[:d.topN][k]
	}
	return 0
}

// NewDecoder returns a decoder of p.
func (p *Plan) NewDecoder() *Decoder { return &Decoder{p: p} }

// Decode reads type t from b[0:] and appends the fields it records to
// r.Fields (nested values in r's scratch area: see [dissect.Record.Alloc]).
// It returns the number of bytes read. Bytes values alias b. A value
// outside its enum is a warning on r; bytes that cannot be the type are
// a [*DecodeError] naming the field of t that failed, after which
// r.Fields holds the fields of t read whole before it (a protocol that
// decodes "as far as the bytes go" keeps them).
func (d *Decoder) Decode(r *dissect.Record, t int, b []byte) (int, error) {
	d.r, d.values = r, 0
	ct := &d.p.types[t]
	if ct.flat != nil && len(b) >= ct.flat.size && len(ct.fields) <= d.p.lim.MaxValues {
		n := d.flat(ct, r, b)
		d.topN = len(ct.fields)
		return n, nil
	}
	start := len(r.Fields)
	var out []dissect.Field
	if !d.check {
		out = r.Extend(d.p.types[t].nOut)
	}
	n, err := d.seq(t, b, 0, out)
	d.topN = len(d.p.types[t].fields) // their slots stay in d.vals's array
	d.vals = d.vals[:0]
	if err != nil {
		f := &d.p.types[t].fields[d.fail]
		if !d.check {
			r.Fields = r.Fields[:start+f.before]
		}
		if de, ok := err.(*DecodeError); ok {
			de.Field = f.id
		}
	}
	return n, err
}

// failed notes field k as the one that failed when the seq is the type
// given to Decode (its values start at 0), and returns err.
func (d *Decoder) failed(top, k int, err error) error {
	if top == 0 {
		d.fail = k
	}
	return err
}

func short(off, need int, format string, args ...any) *DecodeError {
	return &DecodeError{Offset: off, Msg: fmt.Sprintf(format, args...), Short: true, Need: need}
}

func bad(off int, format string, args ...any) *DecodeError {
	return &DecodeError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// seq reads type ti from b, whose first byte is at offset base of the
// bytes given to Decode, into out.
func (d *Decoder) seq(ti int, b []byte, base int, out []dissect.Field) (int, error) {
	t := &d.p.types[ti]
	top := len(d.vals)
	d.vals = slices.Grow(d.vals, len(t.fields))[:top+len(t.fields)]
	pos, bit := 0, 0
	for k := 0; k < len(t.fields); k++ {
		f := &t.fields[k]
		if r := f.run; r != nil && bit == 0 && len(b)-pos >= r.size && d.values+r.n <= d.p.lim.MaxValues {
			d.fixed(r, b[pos:pos+r.size], out, d.vals[top:])
			d.values += r.n
			pos += r.size
			k += r.n - 1
			continue
		}
		dst := &d.scratch // the value of a field not recorded
		if f.out >= 0 && !d.check {
			o := &out[f.out]
			o.Key = f.id
			dst = &o.Value
		}
		if f.kind == wBits {
			need := (bit + f.width + 7) / 8
			if pos+need > len(b) {
				return pos, d.failed(top, k, short(base+pos, base+pos+need, "%s ends before bit field %q", t.name, f.id))
			}
			raw := readBits(b[pos:], bit, f.width, f.order)
			bit += f.width
			pos, bit = pos+bit/8, bit%8
			d.vals[top+k] = int64(raw)
			if err := d.intValue(f, raw, base+pos, dst); err != nil {
				return pos, d.failed(top, k, err)
			}
			continue
		}
		if bit > 0 {
			pos, bit = pos+1, 0
		}
		if f.plain { // the common case, without the calls of item
			if len(b)-pos < f.width {
				return pos, d.failed(top, k, short(base+pos, base+pos+f.width, "the bytes end before %q", f.id))
			}
			d.values++
			if d.values > d.p.lim.MaxValues {
				return pos, d.failed(top, k, bad(base+pos, "more than %d values in one message", d.p.lim.MaxValues))
			}
			raw := readUint(b[pos:], f.width, f.order)
			if f.kind == wInt {
				sh := 64 - 8*uint(f.width)
				raw = uint64(int64(raw<<sh) >> sh)
				dst.SetInt(int64(raw))
			} else {
				dst.SetUint(raw)
			}
			d.vals[top+k] = int64(raw)
			pos += f.width
			continue
		}
		var n int
		var err error
		if f.repeat == Once {
			var raw int64
			n, raw, err = d.item(f, b[pos:], base+pos, top, dst)
			d.vals[top+k] = raw
		} else {
			n, err = d.array(f, b[pos:], base+pos, top, dst)
		}
		if err != nil {
			return pos, d.failed(top, k, err)
		}
		pos += n
	}
	if bit > 0 {
		pos++
	}
	d.vals = d.vals[:top]
	return pos, nil
}

// ref returns the value of r in the seq whose values start at top.
func (d *Decoder) ref(r cref, top int) int64 {
	if r.idx < 0 {
		return r.n
	}
	return d.vals[top+r.idx]
}

func (d *Decoder) count(off int) error {
	d.values++
	if d.values > d.p.lim.MaxValues {
		return bad(off, "more than %d values in one message", d.p.lim.MaxValues)
	}
	return nil
}

// array reads the items of a repeated field.
func (d *Decoder) array(f *cfield, b []byte, base, top int, dst *dissect.Value) (int, error) {
	least := int(d.p.minSize(f))
	var items []dissect.Field
	pos := 0
	switch f.repeat {
	case RepeatExpr:
		n := d.ref(f.count, top)
		if n < 0 || n > int64(d.p.lim.MaxValues-d.values) {
			return 0, bad(base, "%q: %d items exceed the limit of %d values in a message", f.id, n, d.p.lim.MaxValues)
		}
		if int64(least)*n > int64(len(b)) {
			return 0, short(base, base+least*int(n), "the bytes end before the %d items of %q", n, f.id)
		}
		items = d.r.Alloc(int(n))
		for i := range items {
			k, _, err := d.item(f, b[pos:], base+pos, top, &items[i].Value)
			if err != nil {
				return 0, err
			}
			pos += k
		}
		*dst = dissect.Array(items)
		return pos, nil
	}
	items = d.r.Alloc(8)[:0]
	for {
		if f.repeat == RepeatEOS && pos >= len(b) {
			break
		}
		if err := d.count(base + pos); err != nil {
			return 0, err
		}
		if len(items) == cap(items) {
			items = append(d.r.Alloc(2 * cap(items))[:0], items...)
		}
		items = items[:len(items)+1]
		k, raw, err := d.item(f, b[pos:], base+pos, top, &items[len(items)-1].Value)
		if err != nil {
			return 0, err
		}
		pos += k
		if f.repeat == RepeatUntil && raw == f.until {
			break
		}
	}
	*dst = dissect.Array(items)
	return pos, nil
}

// item reads one value of f from b into dst. It returns the bytes read
// and, for an integer, its raw value.
func (d *Decoder) item(f *cfield, b []byte, base, top int, dst *dissect.Value) (int, int64, error) {
	if err := d.count(base); err != nil {
		return 0, 0, err
	}
	switch f.kind {
	case wUint, wInt:
		if len(b) < f.width {
			return 0, 0, short(base, base+f.width, "the bytes end before %q", f.id)
		}
		raw := readUint(b, f.width, f.order)
		if f.kind == wInt {
			sh := 64 - 8*uint(f.width)
			raw = uint64(int64(raw<<sh) >> sh)
		}
		return f.width, int64(raw), d.intValue(f, raw, base, dst)
	case wFloat:
		if len(b) < f.width {
			return 0, 0, short(base, base+f.width, "the bytes end before %q", f.id)
		}
		raw := readUint(b, f.width, f.order)
		switch f.width {
		case 2:
			dst.SetFloat32(halfToFloat32(uint16(raw)))
		case 4:
			dst.SetFloat32(math.Float32frombits(uint32(raw)))
		default:
			dst.SetFloat(math.Float64frombits(raw))
		}
		return f.width, 0, nil
	case wBytes, wStr:
		data, n, err := d.span(f, b, base, top)
		if err != nil {
			return 0, 0, err
		}
		if f.contents != nil {
			if !bytes.Equal(data, f.contents) {
				return 0, 0, bad(base, "%q: want % x, have % x", fieldName(f), f.contents, data)
			}
		}
		if f.kind == wStr {
			dst.SetStr(string(data))
		} else {
			dst.SetBytes(data)
		}
		return n, 0, nil
	}
	// a nested type, chosen or not
	sub := f.sub
	if f.kind == wSwitch {
		on := d.vals[top+f.on]
		s, ok := f.cases[on]
		if !ok {
			if f.def < 0 {
				return 0, 0, bad(base, "%q: no type for %d", fieldName(f), on)
			}
			s = f.def
		}
		sub = s
	}
	in, n := b, -1
	switch {
	case f.hasSize:
		sz := d.ref(f.size, top)
		if sz < 0 || sz > int64(len(b)) {
			return 0, 0, short(base, base+int(min(sz, math.MaxInt32)), "the bytes end before the %d of %q", sz, f.id)
		}
		in, n = b[:sz], int(sz)
	case f.sizeEOS:
		n = len(b)
	}
	out := d.r.Alloc(d.p.types[sub].nOut)
	k, err := d.seq(sub, in, base, out)
	if err != nil {
		if e, ok := err.(*DecodeError); ok && n >= 0 && e.Short {
			return 0, 0, bad(e.Offset, "%s (within the %d bytes of %q)", e.Msg, n, fieldName(f))
		}
		return 0, 0, err
	}
	if n < 0 {
		n = k
	}
	*dst = dissect.Object(out)
	return n, 0, nil
}

func fieldName(f *cfield) string {
	if f.id == "" {
		return "(unnamed)"
	}
	return f.id
}

// span returns the bytes of a bytes or text field and how many it takes
// from b.
func (d *Decoder) span(f *cfield, b []byte, base, top int) ([]byte, int, error) {
	var data []byte
	n := 0
	switch {
	case f.hasSize:
		sz := d.ref(f.size, top)
		if sz < 0 || sz > int64(len(b)) {
			return nil, 0, short(base, base+int(min(max(sz, 0), math.MaxInt32)), "the bytes end before the %d of %q", sz, fieldName(f))
		}
		data, n = b[:sz], int(sz)
		if f.term >= 0 {
			if i := bytes.IndexByte(data, byte(f.term)); i >= 0 {
				data = data[:i]
			}
		}
	case f.sizeEOS:
		data, n = b, len(b)
	default: // a terminator alone: it is read, not kept
		i := bytes.IndexByte(b, byte(f.term))
		if i < 0 {
			return nil, 0, short(base, 0, "no terminator 0x%02x ends %q", f.term, fieldName(f))
		}
		data, n = b[:i], i+1
	}
	if f.pad >= 0 {
		data = bytes.TrimRight(data, string([]byte{byte(f.pad)}))
	}
	return data, n, nil
}

// intValue checks an integer and turns it into its recorded value.
func (d *Decoder) intValue(f *cfield, raw uint64, off int, dst *dissect.Value) error {
	signed := f.kind == wInt
	if f.valid != nil {
		v := int64(raw)
		ok := true
		if f.valid.Min != nil && v < *f.valid.Min || f.valid.Max != nil && v > *f.valid.Max {
			ok = false
		}
		if len(f.valid.AnyOf) > 0 {
			found := false
			for _, a := range f.valid.AnyOf {
				found = found || a == v
			}
			ok = ok && found
		}
		if !ok {
			return bad(off, "%q: %d is not valid", fieldName(f), v)
		}
	}
	switch {
	case f.boolean:
		d.boolValue(f, raw, dst)
	case f.enum != nil:
		if name, ok := f.enum[int64(raw)]; ok {
			dst.SetStr(name)
			return nil
		}
		d.r.Warnf("%s: %d is not a value its enum names", fieldName(f), int64(raw))
		dst.SetStr(strconv.FormatInt(int64(raw), 10))
	case f.scale != 0 && signed:
		dst.SetFloat(float64(int64(raw))*f.scale + f.offset)
	case f.scale != 0:
		dst.SetFloat(float64(raw)*f.scale + f.offset)
	case signed:
		dst.SetInt(int64(raw))
	default:
		dst.SetUint(raw)
	}
	return nil
}

// readUint reads an unsigned integer of width bytes.
func readUint(b []byte, width int, o Order) uint64 {
	if o == BigEndian {
		switch width {
		case 1:
			return uint64(b[0])
		case 2:
			return uint64(binary.BigEndian.Uint16(b))
		case 4:
			return uint64(binary.BigEndian.Uint32(b))
		case 8:
			return binary.BigEndian.Uint64(b)
		}
		var v uint64
		for i := 0; i < width; i++ {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	switch width {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := width - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// readBits reads n bits from b starting at bit `bit` of b[0]: most
// significant bit first (be), or least significant first (le, with the
// first bit read the value's least significant).
func readBits(b []byte, bit, n int, o Order) uint64 {
	var v uint64
	for i := 0; i < n; i++ {
		p := bit + i
		if o == BigEndian {
			v = v<<1 | uint64(b[p/8]>>(7-p%8)&1)
		} else {
			v |= uint64(b[p/8]>>(p%8)&1) << i
		}
	}
	return v
}

// halfToFloat32 converts an IEEE 754 binary16 value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal
		return float32(math.Copysign(float64(frac)*math.Pow(2, -24), float64(int32(sign>>31)*-2+1)))
	case exp == 0x1f:
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
