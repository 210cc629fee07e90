package output

import (
	"strconv"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
)

// headCache keeps, per stream and direction, the JSON of the keys a
// record shares with every record of its stream and direction: from
// "proto" to "dst". A stream's records repeat them, so one lookup and one
// copy replace three string lookups and two conversions. Entries are
// found by the addresses and lengths of the strings, like jsonCache's,
// and hold those strings, so an address is never reused for other text
// while it is cached.
type headCache struct {
	slots [64]headEntry
}

type headEntry struct {
	proto, src, dst *byte
	pn, sn, dn      int
	transport       dissect.Transport
	stream          int
	enc             []byte // empty: the slot is unused
}

// append writes `,"proto":...,"dst":...` for r.
func (h *headCache) append(j *JSON, b []byte, r *dissect.Record) []byte {
	pp, sp, dp := unsafe.StringData(r.Proto), unsafe.StringData(r.Src), unsafe.StringData(r.Dst)
	e := &h.slots[(uint(r.Stream)*2+uint(uintptr(unsafe.Pointer(sp))>>4))&63]
	if len(e.enc) == 0 || e.proto != pp || e.src != sp || e.dst != dp || e.pn != len(r.Proto) ||
		e.sn != len(r.Src) || e.dn != len(r.Dst) || e.transport != r.Transport || e.stream != r.Stream {
		enc := append(e.enc[:0], `,"proto":`...)
		enc = j.strs.append(enc, r.Proto)
		enc = append(enc, `,"transport":"`...)
		enc = append(enc, r.Transport.String()...)
		enc = append(enc, `","stream":`...)
		enc = strconv.AppendInt(enc, int64(r.Stream), 10)
		enc = append(enc, `,"src":`...)
		enc = j.strs.append(enc, r.Src)
		enc = append(enc, `,"dst":`...)
		enc = j.strs.append(enc, r.Dst)
		*e = headEntry{proto: pp, src: sp, dst: dp, pn: len(r.Proto), sn: len(r.Src), dn: len(r.Dst),
			transport: r.Transport, stream: r.Stream, enc: enc}
	}
	return append(b, e.enc...)
}
