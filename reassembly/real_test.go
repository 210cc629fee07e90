package reassembly

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/capture"
)

// pcapsDir holds the repository's sample captures; each but the VRPN ones
// has a <name>.truth.json sidecar written from the generator, not from
// this code.
const pcapsDir = "../pcaps"

// readCapture reads every packet of a pcap or pcapng file, copied.
func readCapture(t *testing.T, path string) []*capture.Packet {
	t.Helper()
	src, err := capture.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var out []*capture.Packet
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		q := *p
		q.Data = append([]byte(nil), p.Data...)
		out = append(out, &q)
	}
}

// truthDirs returns, from a sidecar, the bytes and gap bytes of every
// direction ("id/dir"), or nil when there is none.
func truthDirs(t *testing.T, capPath string) (bytes, gaps map[string]int64) {
	base := strings.TrimSuffix(strings.TrimSuffix(capPath, ".pcapng"), ".pcap")
	raw, err := os.ReadFile(base + ".truth.json")
	if err != nil {
		return nil, nil
	}
	var tr struct {
		Streams []struct {
			Stream     int
			Directions []struct {
				Dir   int
				Bytes int64
				Gaps  [][2]int64
			}
		}
	}
	if err := json.Unmarshal(raw, &tr); err != nil {
		t.Fatal(err)
	}
	bytes, gaps = map[string]int64{}, map[string]int64{}
	for _, s := range tr.Streams {
		for _, d := range s.Directions {
			k := dirKey(s.Stream, d.Dir)
			bytes[k] = d.Bytes
			for _, g := range d.Gaps {
				gaps[k] += g[1] - g[0]
			}
		}
	}
	return bytes, gaps
}

func dirKey(id, dir int) string { return fmt.Sprintf("%d/%d", id, dir) }

// gapRecorder sums Gap bytes per direction on top of a recorder.
type gapRecorder struct {
	*recorder
	gaps map[[2]int]int64
}

func (g *gapRecorder) Gap(s *Stream, dir Dir, tm Stamp, n int64) {
	g.recorder.Gap(s, dir, tm, n)
	g.gaps[[2]int{s.ID, int(dir)}] += n
}

func runCapture(t *testing.T, pkts []*capture.Packet) (*gapRecorder, Stats) {
	t.Helper()
	g := &gapRecorder{recorder: newRecorder(), gaps: map[[2]int]int64{}}
	a := New(g, Config{})
	for _, p := range pkts {
		a.Packet(p)
	}
	if len(pkts) > 0 {
		a.Flush(pkts[len(pkts)-1].Time)
	}
	g.allClosed()
	g.verify(t)
	return g, a.Stats()
}

// TestRealCaptures runs every sample capture three ways. Whole: the bytes
// and gaps of each direction must be those of its truth sidecar (the VRPN
// captures, complete, must have no gap at all), so the tail-gap rule
// invents none. Cut at HeaderLen and marked Dropped, every packet must
// decode to the same flow, sequence numbers and declared length. With
// every third packet dropped that way, every stream and direction must
// span the same bytes (data + gaps) as whole.
func TestRealCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(pcapsDir, "*.pcap*"))
	if len(files) == 0 {
		t.Skip("no sample captures in " + pcapsDir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			pkts := readCapture(t, path)
			whole, st := runCapture(t, pkts)
			if st.Malformed != 0 {
				t.Errorf("stats %+v", st)
			}
			if bytes, gaps := truthDirs(t, path); bytes != nil {
				for k, n := range whole.span {
					key := dirKey(k[0], k[1])
					if n != bytes[key] || whole.gaps[k] != gaps[key] {
						t.Errorf("direction %s: %d bytes with %d in gaps, truth %d with %d", key, n, whole.gaps[k], bytes[key], gaps[key])
					}
				}
			} else if st.TCPGapBytes != 0 {
				t.Errorf("gaps in a complete capture: %+v", st)
			}

			streams, droppedBytes := 0, 0
			var some []*capture.Packet
			for i, p := range pkts {
				n := HeaderLen(p.LinkType, p.Data)
				var full, cut packet
				out := decode(p.LinkType, p.Data, &full)
				if n == 0 {
					if out == outStream && p.LinkType != capture.LinkUser0 {
						t.Errorf("packet %d: HeaderLen 0 for a stream packet", i)
					}
					if p.LinkType == capture.LinkUser0 && i%3 == 1 {
						// A dropped serial read keeps nothing.
						droppedBytes += len(p.Data)
						q := *p
						q.Data, q.Dropped = nil, true
						p = &q
					}
					some = append(some, p)
					continue
				}
				streams++
				if decode(p.LinkType, p.Data[:n], &cut) != outStream {
					t.Fatalf("packet %d: cut at %d is not a stream packet", i, n)
				}
				fk, _ := full.key()
				ck, _ := cut.key()
				if fk != ck || full.seq != cut.seq || full.ack != cut.ack || full.flags != cut.flags || full.plen != cut.plen || len(cut.payload) != 0 {
					t.Errorf("packet %d: cut at %d decodes differently", i, n)
				}
				if i%3 == 1 {
					droppedBytes += full.plen
					q := *p
					q.Data, q.Dropped = p.Data[:n], true
					p = &q
				}
				some = append(some, p)
			}
			if streams == 0 && !strings.Contains(path, "serial") {
				t.Error("no stream packet")
			}
			lossy, _ := runCapture(t, some)
			var gw, gl int64
			for k := range lossy.gaps {
				gw, gl = gw+whole.gaps[k], gl+lossy.gaps[k]
			}
			if droppedBytes > 0 && gl <= gw {
				t.Errorf("%d payload bytes dropped, but %d gap bytes with drops, %d without", droppedBytes, gl, gw)
			}
			t.Logf("%d of %d packets decoded to streams; %d payload bytes dropped: %d gap bytes (%d without drops)", streams, len(pkts), droppedBytes, gl, gw)
			if len(lossy.streams) != len(whole.streams) {
				t.Fatalf("%d streams with drops, %d without", len(lossy.streams), len(whole.streams))
			}
			for i, s := range whole.streams {
				if lossy.streams[i].Addr != s.Addr || lossy.streams[i].Transport != s.Transport {
					t.Errorf("stream %d: %v %v with drops, %v %v without", i, lossy.streams[i].Transport, lossy.streams[i].Addr, s.Transport, s.Addr)
				}
			}
			for k, n := range whole.span {
				if lossy.span[k] != n {
					t.Errorf("direction %v: %d bytes with drops, %d without", k, lossy.span[k], n)
				}
			}
		})
	}
}
