package deltarobot

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

// parserKeeper is the protocol, keeping the parsers it makes.
type parserKeeper struct {
	protocol
	made []*parser
}

func (k *parserKeeper) NewParser(s *dissect.StreamInfo) dissect.Parser {
	p := k.protocol.NewParser(s).(*parser)
	k.made = append(k.made, p)
	return p
}

// resyncInput is a handshake (protocols.md §4.3), a bad size id, then n
// bytes of candidates that keep Sync undecided: end_of_transmission
// headers declaring 1 MiB (06 f0 00 00 10 00), each cut by the next.
func resyncInput(n int) []byte {
	in := []byte{0x01, 0x30, 'D', 'e', 'l', 't', 'a', 'R', 'V', 'r', 0x02, 0x20, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x77}
	return append(in, bytes.Repeat([]byte{0x06, 0xf0, 0x00, 0x00, 0x10, 0x00}, n/6)...)
}

// feedBytes feeds in one byte at a time through dissect.Stream with a
// decode-as rule and returns the stream's parser and the bytes covered by
// records.
func feedBytes(t testing.TB, in []byte) (*parser, int64) {
	k := &parserKeeper{protocol: New().(protocol)}
	reg, err := dissect.NewRegistry(k)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := reg.ParseDecodeAs("tcp.port==4000,deltarobot")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	var total int64
	sink := dissect.SinkFunc(func(r *dissect.Record) error { total += r.Length; return nil })
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 1, Transport: dissect.TCP}}
	info.Addr = [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:50000"), netip.MustParseAddrPort("10.0.0.2:4000")}
	st := dissect.NewStream(info, reg, sink, dissect.StreamOptions{Decode: true})
	t0 := time.Unix(1795306127, 0)
	for i := range in {
		st.Data(0, t0, in[i:i+1])
	}
	st.End(0, t0)
	if len(k.made) != 1 {
		t.Fatalf("%d parsers", len(k.made))
	}
	return k.made[0], total
}

// TestSyncWorkBounded: 1 MiB of candidates that keep Sync undecided, fed
// one byte at a time, costs Sync a few looks per byte, not a rescan of
// what the stream holds (up to its 64 KiB sync limit) on every byte.
func TestSyncWorkBounded(t *testing.T) {
	in := resyncInput(1 << 20)
	p, total := feedBytes(t, in)
	t.Logf("%d bytes: %d offsets examined", len(in), p.examined)
	if p.examined > 2*int64(len(in)) {
		t.Errorf("Sync examined %d offsets for %d bytes; want at most 2 per byte", p.examined, len(in))
	}
	if total != int64(len(in)) {
		t.Errorf("records cover %d bytes, want %d", total, len(in))
	}
}

// BenchmarkResync1Byte measures 256 KiB of undecided candidates in 1-byte
// segments through dissect.Stream.
func BenchmarkResync1Byte(b *testing.B) {
	in := resyncInput(256 << 10)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		feedBytes(b, in)
	}
}
