package reassembly

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// fuzzFragSource is one datagram the fuzzer cuts fragments from: an IP
// header (IPv6: with the fragment header's place), and the IP payload
// followed by filler, so that any offset and length up to 65535 + 2047
// reads real bytes.
type fuzzFragSource struct {
	ip      []byte // the whole packet
	hl      int    // unfragmentable header length
	body    []byte // IP payload, then filler
	payload []byte // UDP: the datagram's payload; nil for TCP
}

func fuzzFragSources() []fuzzFragSource {
	mk := func(ip []byte, payload []byte) fuzzFragSource {
		hl := int(ip[0]&0x0f) * 4
		if ip[0]>>4 == 6 {
			hl = 40
		}
		body := append(slices.Clone(ip[hl:]), pattern(fragMaxEnd+2048, 5)...)
		return fuzzFragSource{ip: ip, hl: hl, body: body, payload: payload}
	}
	u1 := pattern(100, 1)
	u2 := pattern(1500, 2)
	u3 := pattern(3000, 3)
	c := pktbuild.NewConn(cli4, srv4, 100, 200)
	return []fuzzFragSource{
		mk(pktbuild.UDPPacket(cli4, netip.AddrPortFrom(srv4.Addr(), 1), u1).Encode(), u1),
		mk(pktbuild.UDPPacket(cli4, netip.AddrPortFrom(srv4.Addr(), 2), u2).Encode(), u2),
		mk(pktbuild.UDPPacket(cli6, netip.AddrPortFrom(srv6.Addr(), 3), u3).Encode(), u3),
		mk(c.Send(C, pattern(1000, 4)).IP().Encode(), nil),
	}
}

// fuzzFrag builds one fragment of src: data [off, off+n) of the body, of
// which only the first captured bytes are in the frame when cut.
func (src *fuzzFragSource) frag(id uint32, off, n int, more, cut bool) []byte {
	hdr := slices.Clone(src.ip[:src.hl])
	data := src.body[off : off+n]
	captured := data
	if cut {
		captured = data[:n/2]
	}
	if hdr[0]>>4 == 6 {
		fh := make([]byte, 8)
		fh[0] = hdr[6]
		fo := uint16(off/8) << 3
		if more {
			fo |= 1
		}
		binary.BigEndian.PutUint16(fh[2:], fo)
		binary.BigEndian.PutUint32(fh[4:], id)
		hdr[6] = ip6Fragment
		binary.BigEndian.PutUint16(hdr[4:], uint16(8+n))
		return append(append(hdr, fh...), captured...)
	}
	binary.BigEndian.PutUint16(hdr[2:], uint16(min(len(hdr)+n, 0xffff)))
	binary.BigEndian.PutUint16(hdr[4:], uint16(id))
	ff := uint16(off / 8)
	if more {
		ff |= 0x2000
	}
	binary.BigEndian.PutUint16(hdr[6:], ff)
	return append(hdr, captured...)
}

// fragCheck checks that every datagram delivered is the original: the
// source is told by the receiver's port.
type fragCheck struct {
	*recorder
	want map[uint16][]byte
}

func (h *fragCheck) Datagram(s *Stream, dir Dir, t Stamp, data []byte) {
	h.recorder.Datagram(s, dir, t, data)
	if w := h.want[s.Addr[dir.Other()].Port()]; !bytes.Equal(data, w) {
		h.fail("stream %d: datagram of %d bytes differs from the original (%d bytes)", s.ID, len(data), len(w))
	}
}

// FuzzFragments feeds fragments of four datagrams (three UDP, over IPv4
// and IPv6, and a TCP segment) at offsets, lengths and flags chosen by the
// input, with a small budget (3 sets, 8000 bytes) and occasional jumps of
// capture time past the timeout. Invariants: no panic; the table's byte
// count is right and within the budget after every packet; the Handler
// contract holds; every datagram delivered is the original, byte for
// byte; Flush leaves nothing held.
func FuzzFragments(f *testing.F) {
	srcs := fuzzFragSources()
	// 6 bytes per fragment: source and flags, id, offset (8-byte units),
	// length.
	f.Add([]byte{0x10, 0, 0, 0, 0, 64, 0x00, 0, 0, 8, 0, 52})
	f.Add([]byte{0x01, 1, 0, 8, 0, 48, 0x11, 1, 0, 0, 0, 64, 0x00, 1, 0, 14, 0, 0})
	f.Add([]byte{0x13, 0, 0, 0, 0, 200, 0x03, 0, 0, 25, 0, 200, 0x03, 0, 0, 50, 3, 0, 0x83, 0, 0, 0, 1, 0})
	f.Add([]byte{0x12, 0, 0, 0, 5, 0, 0x02, 0, 0, 160, 7, 255, 0x42, 0, 31, 255, 0, 40})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newRecorder()
		r.keep = false
		h := &fragCheck{recorder: r, want: map[uint16][]byte{}}
		for i, src := range srcs {
			if src.payload != nil {
				h.want[uint16(i+1)] = src.payload
			}
		}
		a := New(h, Config{})
		a.frags.maxSets = 3
		a.frags.maxBytes = 8000
		now := t0
		for ; len(in) >= 6; in = in[6:] {
			k := in[0] & 3
			more := in[0]&0x10 != 0
			cut := in[0]&0x20 != 0
			if in[0]&0x40 != 0 {
				now = now.Add(fragTimeout + time.Second)
			}
			if in[0]&0x80 != 0 {
				now = now.Add(-time.Second) // capture time going back
			}
			now = now.Add(time.Millisecond)
			src := &srcs[k]
			off := int(binary.BigEndian.Uint16(in[2:4])&0x1fff) * 8
			n := int(binary.BigEndian.Uint16(in[4:6]) & 0x7ff)
			if src.hl == 40 {
				n = min(n, 0xffff-8)
			}
			fr := src.frag(uint32(k)<<1|uint32(in[1]&1), off, n, more, cut) // ids differ across sources
			p := &capture.Packet{Time: now, LinkType: capture.LinkRaw, Data: fr, Length: len(fr)}
			a.Packet(p)
			a.checkFrags(t)
		}
		a.Flush(now)
		if a.frags.held != 0 || len(a.frags.order) != 0 || len(a.frags.sets) != 0 {
			t.Fatalf("held %d in %d sets after Flush", a.frags.held, len(a.frags.order))
		}
		r.allClosed()
		for _, e := range r.errs {
			t.Fatal(e)
		}
	})
}
