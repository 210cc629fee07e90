package reassembly

import (
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// vrpnDir holds the repository's copies of the real VRPN captures and their
// ground truth (truth.json), written by an independent decoder; see its
// README.md.
const vrpnDir = "../dissect/vrpn/testdata"

type vrpnTruth struct {
	Captures map[string]struct {
		Frames         int `json:"frames"`
		TCPConnections []struct {
			SynFrame   int `json:"syn_frame"`
			Directions []struct {
				From         string `json:"from"`
				To           string `json:"to"`
				PayloadBytes int64  `json:"payload_bytes"`
				FinFrame     *int   `json:"fin_frame"`
			} `json:"directions"`
		} `json:"tcp_connections"`
		UDPLob []struct {
			Src string `json:"src"`
			Dst string `json:"dst"`
			Hex string `json:"hex"`
		} `json:"udp_lob_datagrams"`
		UDPFlows []struct {
			From      string `json:"from"`
			To        string `json:"to"`
			Datagrams int    `json:"datagrams"`
		} `json:"udp_message_flows"`
	} `json:"captures"`
}

// TestVRPNCaptures runs the real captures through the assembler and checks
// the figures of truth.json: per TCP direction the delivered byte count
// equals payload_bytes (no gaps, closed by its FIN before the end of the
// capture); the UDP flows are exactly the lob datagrams' flows (with their
// bytes) and udp_message_flows (with their datagram counts).
func TestVRPNCaptures(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(vrpnDir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth vrpnTruth
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	tested := 0
	for name, cp := range truth.Captures {
		if filepath.Ext(name) != ".pcap" {
			continue
		}
		tested++
		t.Run(name, func(t *testing.T) {
			pkts, err := readPcap(filepath.Join(vrpnDir, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(pkts) != cp.Frames {
				t.Fatalf("%d frames, truth says %d", len(pkts), cp.Frames)
			}
			r := newRecorder()
			a := New(r, Config{})
			for _, p := range pkts {
				a.Packet(p)
			}
			closedBeforeFlush := map[[2]int]bool{}
			for k, v := range r.closed {
				closedBeforeFlush[k] = v
			}
			a.Flush(pkts[len(pkts)-1].Time.Add(time.Second))
			r.allClosed()
			r.verify(t)

			// Index the streams by their direction's sender and receiver.
			type dirKey struct{ from, to netip.AddrPort }
			dirs := map[dirKey][2]int{}
			var tcpStreams, udpStreams int
			for _, s := range r.streams {
				for d := range 2 {
					dirs[dirKey{s.Addr[d], s.Addr[1-d]}] = [2]int{s.ID, d}
				}
				switch s.Transport {
				case TCP:
					tcpStreams++
				case UDP:
					udpStreams++
				}
			}
			data := map[[2]int]int64{}
			gaps := map[[2]int]int64{}
			payload := map[[2]int][]byte{}
			for _, e := range r.events {
				k := [2]int{e.id, int(e.dir)}
				switch e.kind {
				case "data":
					data[k] += int64(len(e.data))
				case "gap":
					gaps[k] += e.n
				case "dgram":
					payload[k] = append(payload[k], e.data...)
				}
			}
			if tcpStreams != len(cp.TCPConnections) {
				t.Errorf("%d TCP streams, truth has %d connections", tcpStreams, len(cp.TCPConnections))
			}
			for _, c := range cp.TCPConnections {
				for _, d := range c.Directions {
					k, ok := dirs[dirKey{netip.MustParseAddrPort(d.From), netip.MustParseAddrPort(d.To)}]
					if !ok {
						t.Errorf("no stream for TCP %s -> %s", d.From, d.To)
						continue
					}
					if data[k] != d.PayloadBytes || gaps[k] != 0 {
						t.Errorf("TCP %s -> %s: %d bytes delivered, %d gap bytes; truth: %d payload bytes",
							d.From, d.To, data[k], gaps[k], d.PayloadBytes)
					}
					if d.FinFrame != nil && !closedBeforeFlush[k] {
						t.Errorf("TCP %s -> %s: not closed by its FIN (frame %d)", d.From, d.To, *d.FinFrame)
					}
				}
			}
			wantUDP := map[dirKey]int{}
			lobBytes := map[dirKey]string{}
			for _, l := range cp.UDPLob {
				k := dirKey{netip.MustParseAddrPort(l.Src), netip.MustParseAddrPort(l.Dst)}
				wantUDP[k]++
				lobBytes[k] += l.Hex
			}
			for _, f := range cp.UDPFlows {
				wantUDP[dirKey{netip.MustParseAddrPort(f.From), netip.MustParseAddrPort(f.To)}] += f.Datagrams
			}
			if udpStreams != len(wantUDP) {
				t.Errorf("%d UDP streams, truth has %d flows", udpStreams, len(wantUDP))
			}
			for k, n := range wantUDP {
				id, ok := dirs[k]
				if !ok {
					t.Errorf("no stream for UDP %v -> %v", k.from, k.to)
					continue
				}
				if got := r.dgrams[id]; got != n {
					t.Errorf("UDP %v -> %v: %d datagrams, truth %d", k.from, k.to, got, n)
				}
				if h, ok := lobBytes[k]; ok && hex.EncodeToString(payload[id]) != h {
					t.Errorf("UDP lob %v -> %v: %x, truth %s", k.from, k.to, payload[id], h)
				}
			}
			st := a.Stats()
			if st.Malformed != 0 || len(st.Other) != 0 || st.TCPGapBytes != 0 || st.TruncatedUDP != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
	if tested == 0 {
		t.Fatal("truth.json lists no pcap")
	}
}
