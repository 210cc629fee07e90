package stats

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect/all"
)

// vrpnPing is a ping or pong read from the packets by vrpnPings.
type vrpnPing struct {
	sender string
	at     time.Time // when its last byte (padding included) was captured
}

// vrpnPings frames the VRPN messages of one TCP direction from its bytes,
// with a reader of the test's own written from the wire format in
// dissect/vrpn's package doc: a 24-byte cookie, then messages of a header
// of six big-endian words (length, seconds, microseconds, sender id, type
// id, sequence) and a body of length−24 bytes padded to a multiple of 8.
// It returns the direction's pings and pongs with their sender names,
// learnt from its sender and type descriptions (type ids −1 and −2: the id
// described is the sender word; the body is a 32-bit length counting a
// final NUL, then the name and the NUL).
func vrpnPings(t testing.TB, d *tcpDir) (pings, pongs []vrpnPing) {
	t.Helper()
	const cookie, header = 24, 24
	senders, types := map[int32]string{}, map[int32]string{}
	b := d.data
	off := cookie
	for off < len(b) {
		if len(b)-off < header {
			t.Fatalf("%d bytes left at %d: not a header", len(b)-off, off)
		}
		n := int(binary.BigEndian.Uint32(b[off:]))
		id, typ := int32(binary.BigEndian.Uint32(b[off+12:])), int32(binary.BigEndian.Uint32(b[off+16:]))
		if n < header {
			t.Fatalf("length %d at %d", n, off)
		}
		end := off + header + (n-header+7)/8*8
		if end > len(b) {
			t.Fatalf("message at %d ends at %d, past the direction's %d bytes", off, end, len(b))
		}
		body := b[off+header : off+n]
		switch typ {
		case -1, -2:
			k := int(binary.BigEndian.Uint32(body))
			if k < 1 || 4+k > len(body) || body[4+k-1] != 0 {
				t.Fatalf("description at %d: name length %d in a body of %d", off, k, len(body))
			}
			name := string(body[4 : 4+k-1])
			if typ == -1 {
				senders[id] = name
			} else {
				types[id] = name
			}
		default:
			if typ >= 0 && (types[typ] == "vrpn_Base ping_message" || types[typ] == "vrpn_Base pong_message") {
				sender, ok := senders[id]
				if !ok {
					t.Fatalf("%s at %d from undescribed sender %d", types[typ], off, id)
				}
				p := vrpnPing{sender, d.complete(t, int64(end))}
				if strings.HasSuffix(types[typ], "ping_message") {
					pings = append(pings, p)
				} else {
					pongs = append(pongs, p)
				}
			}
		}
		off = end
	}
	return pings, pongs
}

// TestRTTVRPNAgainstPackets checks -z rtt on the VRPN captures: every
// vrpn_Base ping_message is a request, and every pong that has a ping of
// its sender waiting in the other direction of its connection is a sample
// of (pong complete − complete of the oldest such ping), all in one row
// "vrpn_Base ping_message" per connection (these captures have one
// connection that pings). The pings and pongs are read from the packets
// (readTCP, vrpnPings), not from dissect's records.
func TestRTTVRPNAgainstPackets(t *testing.T) {
	caps, _ := filepath.Glob("../pcaps/vrpn_*.pcap*")
	more, _ := filepath.Glob("../dissect/vrpn/testdata/*.pcap*")
	caps = append(caps, more...)
	if len(caps) < 4 {
		t.Fatalf("VRPN captures: %v", caps)
	}
	for _, path := range caps {
		t.Run(filepath.Base(path), func(t *testing.T) {
			dirs := readTCP(t, path)
			var samples []float64
			var pings int64
			conns := map[string]bool{}
			for key, d := range dirs {
				src, dst, _ := strings.Cut(key, ">")
				back := dirs[dst+">"+src]
				if back == nil || len(d.data) < 24 || !strings.HasPrefix(string(d.data), "vrpn: ver.") {
					continue
				}
				ps, _ := vrpnPings(t, d)
				_, pongs := vrpnPings(t, back)
				pings += int64(len(ps))
				if len(ps) > 0 {
					conns[min(key, dst+">"+src)] = true
				}
				waiting := map[string][]time.Time{}
				for _, p := range ps {
					waiting[p.sender] = append(waiting[p.sender], p.at)
				}
				for _, p := range pongs {
					if w := waiting[p.sender]; len(w) > 0 {
						samples = append(samples, float64(p.at.Sub(w[0]))/1e6)
						waiting[p.sender] = w[1:]
					}
				}
			}
			if len(conns) != 1 || len(samples) == 0 {
				t.Fatalf("%d connections with pings, %d round trips: this test wants one connection and some", len(conns), len(samples))
			}
			w := want(samples)
			w.requests, w.unansweredExpected = pings, pings-int64(len(samples))
			s := NewRTT(runDecls(t, all.Options{}))
			runCapture(t, path, "", all.Options{}, s)
			rows := jsonRows(t, s)
			if len(rows) != 1 || rows[0]["proto"] != "vrpn" || rows[0]["request"] != "vrpn_Base ping_message" {
				t.Fatalf("rows %v, want one vrpn ping row", rows)
			}
			checkRTTRow(t, rows[0], w)
			t.Logf("%d pings, round trips %s ms", pings, fmt.Sprint(samples))
		})
	}
}
