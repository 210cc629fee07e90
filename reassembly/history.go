package reassembly

import (
	"encoding/binary"
	"math/bits"
	"time"
)

// A TCP direction remembers the last histWindow bytes it delivered as
// hashes of histBlock-byte blocks aligned on stream offsets, so that a
// retransmission over delivered data is compared with the first copy at
// any offset and whatever its segment boundaries: the blocks it covers
// whole are compared by hash; the last, incomplete block is kept as bytes
// and compared exactly. The bytes of a retransmission that cover a
// complete block only in part (at most histBlock-1 at each end) are not
// compared, nor are those older than the window or delivered before the
// direction's last gap.
const (
	histBlock  = 32
	histBlocks = 512 // 16 KiB of delivered data per direction
	histWindow = histBlock * histBlocks
)

// history is a direction's memory of its delivered bytes. sums grows with
// the data delivered, 4 bytes per block, up to histBlocks entries (2 KiB);
// with the rest (runs: 4 × 80 bytes), a direction that delivered data
// holds at most about 2.4 KiB.
type history struct {
	sums []uint32 // sums[b%histBlocks]: hash of block b (offsets b*histBlock...)
	from int64    // delivered bytes are known from this offset on (the end of the last gap)
	tail [histBlock]byte
	// runs are the last segments delivered whole and in order, by their
	// range and the bytes at their ends that cover a block only in part,
	// so that a retransmission of the same range is compared there too
	// (its whole blocks are compared by hash); ri is the next to fill.
	runs [histRuns]segRun
	ri   uint8
}

// histRuns is how many delivered segments per direction are remembered
// by their ends: a retransmission re-sends the last unacknowledged
// segments, so a few suffice.
const histRuns = 4

// segRun is a delivered segment [start, end): head holds its bytes up to the
// first block boundary, tail its bytes after the last (or after the head,
// when it spans no boundary), each at most histBlock-1.
type segRun struct {
	start, end int64
	nh, nt     uint8
	head, tail [histBlock - 1]byte
}

// addRun remembers the ends of a segment delivered whole at offset s.
func (hs *history) addRun(s int64, data []byte) {
	e := s + int64(len(data))
	hb := min((s+histBlock-1)/histBlock*histBlock, e) // the head ends at the first boundary
	tb := max(e/histBlock*histBlock, hb)              // the tail starts at the last
	r := &hs.runs[hs.ri%histRuns]
	hs.ri++
	r.start, r.end = s, e
	r.nh = uint8(copy(r.head[:], data[:hb-s]))
	r.nt = uint8(copy(r.tail[:], data[tb-s:]))
}

// hashKey seeds the block hashes: a sender cannot make two blocks collide
// on purpose without knowing it.
type hashKey [4]uint64

// sum hashes one block of histBlock bytes.
func (k *hashKey) sum(b []byte) uint32 {
	return blockSum((*[histBlock]byte)(b), k[0], k[1], k[2], k[3])
}

// blockSum hashes a block with the key k0..k3: two 64x64->128-bit
// multiplies of seeded words, folded (the wyhash mixing step). Small
// enough to be inlined in record's loops, the history's cost on in-order
// data.
func blockSum(p *[histBlock]byte, k0, k1, k2, k3 uint64) uint32 {
	h1, l1 := bits.Mul64(binary.LittleEndian.Uint64(p[:8])^k0, binary.LittleEndian.Uint64(p[8:16])^k1)
	h2, l2 := bits.Mul64(binary.LittleEndian.Uint64(p[16:24])^k2, binary.LittleEndian.Uint64(p[24:32])^k3)
	x := h1 ^ l1 ^ bits.RotateLeft64(h2^l2, 29)
	return uint32(x ^ x>>32)
}

// grow makes room for the hashes of every block up to b. The hashes of
// blocks from histBlocks on fill the whole ring: a run of blocks that
// reaches b may wrap through every index of it.
func (hs *history) grow(b int64) {
	n := histBlocks
	if b < histBlocks {
		n = min(histBlocks, max(int(b)+1, 2*len(hs.sums), 16))
	}
	if n <= len(hs.sums) {
		return
	}
	s := make([]uint32, n)
	copy(s, hs.sums)
	hs.sums = s
}

// record remembers data, delivered at offset off.
func (a *Assembler) record(h *half, off int64, data []byte) {
	hs := h.hist
	if hs == nil {
		hs = &history{from: off}
		h.hist = hs
	}
	if r := off % histBlock; r != 0 {
		n := copy(hs.tail[r:], data)
		data = data[n:]
		off += int64(n)
		if off%histBlock == 0 && off-histBlock >= hs.from {
			b := off/histBlock - 1
			hs.grow(b)
			hs.sums[b%histBlocks] = a.hkey.sum(hs.tail[:])
		}
	}
	if nb := int64(len(data) / histBlock); nb > 0 {
		b := off / histBlock
		if nb > histBlocks {
			// Only the last histBlocks blocks stay in the ring: the
			// others would be overwritten before record returns.
			skip := nb - histBlocks
			data = data[skip*histBlock:]
			b += skip
			nb = histBlocks
		}
		hs.grow(b + nb - 1)
		k0, k1, k2, k3 := a.hkey[0], a.hkey[1], a.hkey[2], a.hkey[3]
		if len(hs.sums) == histBlocks {
			// The whole ring: its index needs no bounds check; four
			// blocks a turn, so the loop's own work is a quarter.
			ring := (*[histBlocks]uint32)(hs.sums)
			i := b
			for ; len(data) >= 4*histBlock; i += 4 {
				q := (*[4 * histBlock]byte)(data)
				ring[i&(histBlocks-1)] = blockSum((*[histBlock]byte)(q[:]), k0, k1, k2, k3)
				ring[(i+1)&(histBlocks-1)] = blockSum((*[histBlock]byte)(q[histBlock:]), k0, k1, k2, k3)
				ring[(i+2)&(histBlocks-1)] = blockSum((*[histBlock]byte)(q[2*histBlock:]), k0, k1, k2, k3)
				ring[(i+3)&(histBlocks-1)] = blockSum((*[histBlock]byte)(q[3*histBlock:]), k0, k1, k2, k3)
				data = data[4*histBlock:]
			}
			for ; len(data) >= histBlock; i++ {
				ring[i&(histBlocks-1)] = blockSum((*[histBlock]byte)(data), k0, k1, k2, k3)
				data = data[histBlock:]
			}
		} else {
			// Growing: every block up to b+nb-1 has its entry (grow).
			sums := hs.sums[b : b+nb]
			for i := range sums {
				sums[i] = blockSum((*[histBlock]byte)(data), k0, k1, k2, k3)
				data = data[histBlock:]
			}
		}
	}
	copy(hs.tail[:], data)
}

// forgetHistory notes a gap: the bytes before the delivery point are not
// known contiguously any more.
func (h *half) forgetHistory() {
	if h.hist != nil {
		h.hist.from = h.off
	}
}

// checkHistory compares data, retransmitted at offset s and wholly before
// the delivery point, with the remembered first copy, and reports a
// Conflict from the first differing byte (or block) to the last. whole
// says data is a whole segment, captured whole: if it has the range of a
// remembered run, its ends are compared too.
func (a *Assembler) checkHistory(c *conn, d Dir, h *half, t time.Time, s int64, data []byte, whole bool) {
	hs := h.hist
	if hs == nil || len(data) == 0 {
		return
	}
	e := s + int64(len(data))
	cur := h.off / histBlock * histBlock // start of the incomplete block
	lo, hi := int64(-1), int64(-1)
	mark := func(x, y int64) {
		if lo < 0 || x < lo {
			lo = x
		}
		hi = max(hi, y)
	}
	// The ends of the same segment, byte by byte.
	for i := range hs.runs {
		if r := &hs.runs[i]; whole && r.start == s && r.end == e && e > s {
			if x, y, ok := diff(data[:r.nh], r.head[:r.nh]); ok {
				mark(s+x, s+y)
			}
			t0 := int64(len(data)) - int64(r.nt)
			if x, y, ok := diff(data[t0:], r.tail[:r.nt]); ok {
				mark(s+t0+x, s+t0+y)
			}
			break
		}
	}
	// Complete blocks covered whole, within the window, after the gap.
	first := max(s, hs.from, cur-histWindow)
	b := (first + histBlock - 1) / histBlock
	for ; (b+1)*histBlock <= min(e, cur); b++ {
		x := b * histBlock
		if i := int(b % histBlocks); i < len(hs.sums) && a.hkey.sum(data[x-s:x-s+histBlock]) != hs.sums[i] {
			mark(x, x+histBlock)
		}
	}
	// The incomplete block, byte by byte.
	if x, y := max(s, cur, hs.from), min(e, h.off); x < y {
		if i, j, ok := diff(data[x-s:y-s], hs.tail[x-cur:y-cur]); ok {
			mark(x+i, x+j)
		}
	}
	if lo >= 0 {
		a.conflict(c, d, t, lo, hi)
	}
}

// diff returns the range from the first differing byte of p and q (of
// the same length) to the last.
func diff(p, q []byte) (i, j int64, ok bool) {
	if string(p) == string(q) {
		return 0, 0, false
	}
	i, j = 0, int64(len(p))
	for p[i] == q[i] {
		i++
	}
	for p[j-1] == q[j-1] {
		j--
	}
	return i, j, true
}

// conflict reports that the retransmitted bytes [lo, hi) differ from the
// first copy, which was kept.
func (a *Assembler) conflict(c *conn, d Dir, t time.Time, lo, hi int64) {
	a.stats.TCPConflicts++
	a.stats.TCPConflictBytes += hi - lo
	a.h.Conflict(&c.s, d, t, lo, hi-lo)
}
