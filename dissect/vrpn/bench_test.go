package vrpn

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// benchSetup returns, for c3's server-to-client direction (truth.json), the
// cookie followed by descriptions of its ids (head), and n copies of its
// Pose0 Pos_Quat message with sequence numbers 0..n-1 (body).
func benchSetup(b *testing.B, n int) (head, body []byte) {
	tf := loadTruth(b)
	c := tf.Captures["c3_multi_device_truth.pcap"]
	var ex *truthMsg
	for _, m := range c.Examples {
		if m.TypeName == namePosQuat && m.SenderName != nil && *m.SenderName == "Pose0" {
			ex = m
			break
		}
	}
	if ex == nil {
		b.Fatal("no Pose0 Pos_Quat example")
	}
	head = append(mustHex(b, c.dir(ex.From, ex.To).Cookie.Hex), encDescriptions(b, c.namingDir(b, ex))...)
	msg := ex.bytes(b)
	for i := 0; i < n; i++ {
		m := append([]byte(nil), msg...)
		m[20], m[21], m[22], m[23] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
		body = append(body, m...)
	}
	return head, body
}

var benchModes = []struct {
	name   string
	decode bool
}{{"decode", true}, {"types", false}}

// BenchmarkParsePosQuat measures Parse over 1000 Pos_Quat messages, with
// fields (decode) and types only (types).
func BenchmarkParsePosQuat(b *testing.B) {
	head, body := benchSetup(b, 1000)
	benchParse(b, head, body, func(_ int, r *dissect.Record) bool { return r.Type == namePosQuat })
}

// benchParse measures Parse over the messages of body after head (the
// cookie and descriptions) in each of benchModes; ok judges the record of
// message i.
func benchParse(b *testing.B, head, body []byte, ok func(i int, r *dissect.Record) bool) {
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			h := newTCP(b)
			h.feed(b, 0, head, false)
			h.decode = bc.decode
			start := h.off[0]
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				h.off[0] = start
				for i, rest := 0, body; len(rest) > 0; i++ {
					n, err := h.parse(0, rest, false)
					if err != nil || !ok(i, &h.rec) {
						b.Fatalf("Parse = %d, %v, type %q, warnings %q", n, err, h.rec.Type, h.rec.Warnings)
					}
					rest = rest[n:]
				}
			}
		})
	}
}

// BenchmarkStreamPosQuat measures the whole direction (cookie,
// descriptions, 1000 Pos_Quat) through dissect.Stream in 1460-byte
// segments, to a sink that drops the records.
func BenchmarkStreamPosQuat(b *testing.B) {
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			head, body := benchSetup(b, 1000)
			in := append(head, body...)
			reg, _ := registry(b)
			sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
			info := newTCP(b).info
			t0 := time.Unix(1795306127, 0)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: bc.decode})
				for rest := in; len(rest) > 0; {
					n := min(1460, len(rest))
					st.Data(0, t0, rest[:n])
					rest = rest[n:]
				}
				st.End(0, t0)
			}
		})
	}
}

// BenchmarkResync measures a TCP direction through dissect.Stream whose
// cookie is followed by 256 KiB of garbage that keeps Sync searching:
// hostile (candidates that wait for up to 32 KiB, hostileGarbage) and
// random bytes, in 1-byte segments and, for hostile, in 16-byte segments
// that never end where a candidate's message does; dense (denseGarbage)
// in such 16-byte segments, where the first waiting candidate moves 8
// bytes at a time while the stream holds 32 KiB behind it (a cost of
// dissect.Stream, which moves what it holds each time Sync passes over
// bytes, not of Sync); benign is the cookie,
// descriptions and Pos_Quat messages of BenchmarkStreamPosQuat in 1-byte
// segments, for comparison.
func BenchmarkResync(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	pad := []byte(testCookie + "\xff\xff\xff\xff\xff\xff\xff\xff")
	random := make([]byte, 256<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	head, body := benchSetup(b, 256<<10/64)
	cases := []struct {
		name  string
		in    []byte
		first int
		seg   int
	}{
		{"hostile/1", append(append([]byte(nil), pad...), hostileGarbage(rng, 256<<10)...), 1, 1},
		{"hostile/16", append(append([]byte(nil), pad...), hostileGarbage(rng, 256<<10)...), 36, 16},
		{"random/1", append(append([]byte(nil), pad...), random...), 1, 1},
		{"dense/16", append(append([]byte(nil), pad...), denseGarbage(4, 4000)...), 36, 16},
		{"benign/1", append(head, body...), 1, 1},
	}
	reg, _ := registry(b)
	sink := dissect.SinkFunc(func(*dissect.Record) error { return nil })
	info := newTCP(b).info
	t0 := time.Unix(1795306127, 0)
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{})
				st.Data(0, t0, bc.in[:bc.first])
				for i := bc.first; i < len(bc.in); i += bc.seg {
					st.Data(0, t0, bc.in[i:min(i+bc.seg, len(bc.in))])
				}
				st.End(0, t0)
			}
		})
	}
}

// denseGarbage returns units blocks of n+2 plausible headers, one every 8
// bytes (words: length L = 8n+32, then 0, so that every header's tv_usec,
// sender and type words are plausible too), each followed by 8n+64 bytes
// of 0xFF where every candidate's message ends on an implausible header.
// The candidates are waiting together and resolved in offset order.
func denseGarbage(units, n int) []byte {
	var b []byte
	l := uint32(8*n + 32)
	for range units {
		for range n + 2 {
			b = binary.BigEndian.AppendUint32(b, l)
			b = binary.BigEndian.AppendUint32(b, 0)
		}
		for range 8*n + 64 {
			b = append(b, 0xFF)
		}
	}
	return b
}
