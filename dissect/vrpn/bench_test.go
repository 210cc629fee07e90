package vrpn

import (
	"testing"
	"time"

	"dissect/dissect"
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
	for _, bc := range benchModes {
		b.Run(bc.name, func(b *testing.B) {
			head, body := benchSetup(b, 1000)
			h := newTCP(b)
			h.feed(b, 0, head, false)
			h.decode = bc.decode
			start := h.off[0]
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				h.off[0] = start
				for rest := body; len(rest) > 0; {
					n, err := h.parse(0, rest, false)
					if err != nil || h.rec.Type != namePosQuat {
						b.Fatalf("Parse = %d, %v, type %q", n, err, h.rec.Type)
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
