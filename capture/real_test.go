package capture

import (
	"bytes"
	"encoding/hex"
	"io"
	"os"
	"testing"
	"testing/iotest"
	"time"
)

// Ground truth for testdata/b_udp_tcp.pcap{,ng}, from
// /work/shared/captures/vrpn/truth.json, entry "b_udp_tcp.pcap".
const (
	truthFrames     = 43                                 // "frames"
	truthFirstSec   = 1795306106                         // "first_frame_epoch": 1795306106.460844
	truthFirstUsec  = 460844                             //
	truthDurationUs = 4_004_480                          // "duration_s": 4.00448
	truthLobHex     = "3132372e302e302e3120353637303700" // udp_lob_datagrams[0].hex, frame 1
)

func readFile(t *testing.T, path string) []got {
	t.Helper()
	src, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	pkts, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	pr, ok := src.(Progresser)
	if !ok {
		t.Fatal("file source does not implement Progresser")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if done, total := pr.Progress(); done != st.Size() || total != st.Size() {
		t.Errorf("Progress() = %d, %d at the end; want %d, %d", done, total, st.Size(), st.Size())
	}
	return pkts
}

func TestRealCaptures(t *testing.T) {
	pcap := readFile(t, "testdata/b_udp_tcp.pcap")
	ng := readFile(t, "testdata/b_udp_tcp.pcapng")
	if len(pcap) != truthFrames {
		t.Errorf("pcap: %d packets, truth.json says %d frames", len(pcap), truthFrames)
	}
	if len(ng) != truthFrames {
		t.Errorf("pcapng: %d packets, truth.json says %d frames", len(ng), truthFrames)
	}
	// editcap keeps frames, times and bytes; the pcapng adds no
	// interface name and no direction.
	sameGot(t, ng, pcap)
	if len(pcap) == 0 {
		return
	}
	first := time.Unix(truthFirstSec, truthFirstUsec*1000)
	for name, pkts := range map[string][]got{"pcap": pcap, "pcapng": ng} {
		if !pkts[0].Time.Equal(first) {
			t.Errorf("%s: first packet at %v, truth.json says %v", name, pkts[0].Time, first)
		}
		if d := pkts[len(pkts)-1].Time.Sub(pkts[0].Time); d != truthDurationUs*time.Microsecond {
			t.Errorf("%s: duration %v, truth.json says 4.00448s", name, d)
		}
		for i, p := range pkts {
			if p.LinkType != LinkEthernet || p.Interface != 0 || p.Dir != DirUnknown {
				t.Errorf("%s packet %d: link type %d, interface %d, direction %d", name, i, p.LinkType, p.Interface, p.Dir)
			}
			if p.Length != len(p.Data) { // tcpdump -s 0: nothing was cut
				t.Errorf("%s packet %d: length %d, captured %d", name, i, p.Length, len(p.Data))
			}
		}
		// Frame 1 is the UDP lob datagram: Ethernet (14) + IPv4 (20) +
		// UDP (8) + 16 bytes.
		lob, _ := hex.DecodeString(truthLobHex)
		if d := []byte(pkts[0].Data); len(d) != 42+16 || !bytes.Equal(d[42:], lob) {
			t.Errorf("%s: first frame is % x, want the lob datagram % x at byte 42", name, d, lob)
		}
	}
}

// TestSmallReads reads the real files through readers that return one or
// a few bytes at a time, so every record straddles buffer refills.
func TestSmallReads(t *testing.T) {
	for _, path := range []string{"testdata/b_udp_tcp.pcap", "testdata/b_udp_tcp.pcapng"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := readBytes(t, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []struct {
			name string
			wrap func(io.Reader) io.Reader
		}{
			{"one byte", iotest.OneByteReader},
			{"half", iotest.HalfReader},
			{"data+err", iotest.DataErrReader},
		} {
			name := w.name
			src, err := NewReader(w.wrap(bytes.NewReader(data)), path)
			if err != nil {
				t.Fatal(err)
			}
			pkts, err := readAll(t, src)
			if err != nil {
				t.Fatalf("%s %s: %v", path, name, err)
			}
			sameGot(t, pkts, want)
			if done, total := src.(Progresser).Progress(); done != int64(len(data)) || total != 0 {
				t.Errorf("%s %s: Progress() = %d, %d; want %d, 0", path, name, done, total, len(data))
			}
		}
	}
}
