package pipeline

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// halfMessages builds what `go run ./internal/hostile halfmsg n both`
// writes (internal/hostile/halfmsg.go): n VRPN connections, one after the
// other, in which each direction sends its cookie, then announces a
// message of 1 MiB − 64 bytes and sends all of it but the last 8 bytes.
// Then, unlike the generator, each direction sends those 8 bytes, in
// connection order: the messages still held are decoded, and the others
// show where they were passed over.
func halfMessages(n int) (pkts []capture.Packet, server netip.AddrPort) {
	const length, seg = 1<<20 - 64, 32 << 10
	server = netip.MustParseAddrPort("192.0.2.1:3883")
	cookie := []byte("vrpn: ver. 07.38  0\x00\x00\x00\x00\x00")
	msg := make([]byte, length)
	binary.BigEndian.PutUint32(msg, length)
	binary.BigEndian.PutUint32(msg[4:], 1_700_000_000)
	enc := pktbuild.Encap{Type: capture.LinkEthernet}
	t := time.Unix(1_700_000_000, 0).UTC()
	add := func(src, dst netip.AddrPort, tcp pktbuild.TCP) {
		t = t.Add(time.Microsecond)
		pkts = append(pkts, *enc.Wrap(pktbuild.TCPPacket(src, dst, tcp).Encode()).Packet(t))
	}
	send := func(src, dst netip.AddrPort, seq *uint32, data []byte) {
		for len(data) > 0 {
			k := min(len(data), seg)
			add(src, dst, pktbuild.TCP{Seq: *seq, Ack: 1, Flags: pktbuild.ACK | pktbuild.PSH, Payload: data[:k]})
			*seq += uint32(k)
			data = data[k:]
		}
	}
	clients := make([]netip.AddrPort, n)
	seqs := make([][2]uint32, n)
	for i := range n {
		c := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), uint16(1024+i))
		clients[i] = c
		add(c, server, pktbuild.TCP{Seq: 0, Flags: pktbuild.SYN})
		add(server, c, pktbuild.TCP{Seq: 0, Ack: 1, Flags: pktbuild.SYN | pktbuild.ACK})
		seqs[i] = [2]uint32{1, 1}
		send(c, server, &seqs[i][0], cookie)
		send(server, c, &seqs[i][1], cookie)
		send(c, server, &seqs[i][0], msg[:length-8])
		send(server, c, &seqs[i][1], msg[:length-8])
	}
	for i, c := range clients {
		send(c, server, &seqs[i][0], msg[length-8:])
		send(server, c, &seqs[i][1], msg[length-8:])
	}
	return pkts, server
}

// TestHeldMessagesWithinBudget: 6 connections hold 12 unfinished messages
// of about 1 MiB under a budget of 3.5 MiB, so at most 3 fit at once and
// at least 9 give way, the oldest first: those kept are the last ones
// sent. Every direction's records tile it: a cookie, then the message
// decoded or one skipped record of exactly its 1 MiB − 64 bytes whose
// reason names the budget. The summary counts what gave way and the
// bytes held never passed the budget.
func TestHeldMessagesWithinBudget(t *testing.T) {
	const n, length, budget = 6, 1<<20 - 64, 7 << 19
	pkts, server := halfMessages(n)
	for _, countOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("countOnly=%v", countOnly), func(t *testing.T) {
			sink := newGateSink(true)
			sum, err := Run(context.Background(), &sliceSource{pkts: pkts}, Config{
				Registry: registry(t), Sink: sink, CountOnly: countOnly,
				Limits: dissect.Limits{MaxHeld: budget},
			})
			if err != nil {
				t.Fatal(err)
			}
			type dirKey struct {
				stream int
				src    string
			}
			// pos is the order a direction's message started: connection
			// by connection, the client's first.
			pos := func(k dirKey) int {
				if k.src == server.String() {
					return 2*k.stream + 1
				}
				return 2 * k.stream
			}
			next := map[dirKey]int64{}
			fate := make([]string, 2*n)
			for _, r := range sink.records() {
				k := dirKey{r.Stream, r.Src}
				if _, ok := next[k]; !ok && countOnly {
					next[k] = 24 // the cookie was counted, not sent
				}
				if r.Offset != next[k] {
					t.Fatalf("%v: record %s at offset %d, want %d (records must tile the stream)", k, r.Type, r.Offset, next[k])
				}
				next[k] += r.Length
				switch {
				case r.Offset == 0 && r.Type == "cookie" && r.Length == 24:
				case r.Offset == 24 && r.Length == length && r.Type == dissect.TypeSkipped:
					reason, _ := r.Fields.Get("reason")
					if !strings.Contains(reason.Str(), fmt.Sprintf("held-message budget of %d bytes reached", budget)) {
						t.Fatalf("%v: skipped record's reason %q does not name the budget", k, reason.Str())
					}
					fate[pos(k)] = "dropped"
				case r.Offset == 24 && r.Length == length && r.Type != dissect.TypeGap:
					fate[pos(k)] = "kept"
				default:
					t.Fatalf("%v: unexpected record %s [%d,+%d)", k, r.Type, r.Offset, r.Length)
				}
			}
			for k, end := range next {
				if end != 24+length {
					t.Errorf("%v: records cover %d bytes, want %d", k, end, 24+length)
				}
			}
			dropped := 0
			for dropped < len(fate) && fate[dropped] == "dropped" {
				dropped++
			}
			for i, f := range fate[dropped:] {
				switch {
				case f == "dropped":
					t.Fatalf("messages dropped %v: want the oldest first", fate)
				case f == "" && !countOnly: // -q counts messages without warnings instead
					t.Errorf("direction %d: no record for its message", dropped+i)
				}
			}
			if kept := 2*n - dropped; kept > 3 || kept < 1 {
				t.Fatalf("%d messages kept (%v): at least one and at most 3 messages of 1 MiB fit in 3.5 MiB", kept, fate)
			}
			if m := sum.MessageCount(); m != int64(2*n+2*n-dropped) {
				t.Errorf("summary: %d messages, want %d cookies and %d messages", m, 2*n, 2*n-dropped)
			}
			h := sum.Held
			if h.Budget != budget || h.Peak > budget || h.Peak < length-8 {
				t.Errorf("summary: budget %d, peak %d; want budget %d, a peak of at least one message and at most the budget", h.Budget, h.Peak, budget)
			}
			if h.Dropped != int64(dropped) || sum.Skipped != int64(dropped) || sum.SkippedBytes != int64(dropped)*length {
				t.Errorf("summary: %d messages given up, %d skipped records of %d bytes; want %d, %d of %d", h.Dropped, sum.Skipped, sum.SkippedBytes, dropped, dropped, int64(dropped)*length)
			}
			if h.DroppedBytes < int64(dropped) || h.DroppedBytes > int64(dropped)*(length-8) {
				t.Errorf("summary: %d held bytes given up; want between 1 and %d per message", h.DroppedBytes, length-8)
			}
			found := false
			for _, p := range sum.Problems {
				if strings.Contains(p.What, "held-message budget") && p.N == h.Dropped {
					found = true
				}
			}
			if !found {
				t.Errorf("no summary line counts the %d messages given up: %v", h.Dropped, sum.Problems)
			}
		})
	}
}
