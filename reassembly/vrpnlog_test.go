package reassembly

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/capture"
)

// logPkt is one entry of a VRPN log as capture's log reader gives it.
func logPkt(name, data string, t time.Time) *capture.Packet {
	return &capture.Packet{Time: t, LinkType: capture.LinkVRPNLog, InterfaceName: name, Direction: capture.DirInbound, Data: []byte(data), Length: len(data)}
}

// TestVRPNLogStream: a log's entries make one serial-like stream that
// carries "vrpn", direction 1; it outlives IdleTimeout and MaxStreams
// (ended only by Flush); a serial link of the same name is a stream of
// its own.
func TestVRPNLogStream(t *testing.T) {
	pkts := []*capture.Packet{
		logPkt("s.vrpnlog", "cookie+a", t0),
		// An hour later: past the idle timeout of 5 minutes, and a serial
		// read opens a second stream, over MaxStreams 1.
		{Time: t0.Add(time.Hour), LinkType: capture.LinkUser0, InterfaceName: "/dev/ttyUSB0", Data: []byte("tty"), Length: 3},
		logPkt("s.vrpnlog", "b", t0.Add(time.Hour+time.Second)),
		// A serial link named like the log ends the log's stream: each
		// kind its own stream.
		{Time: t0.Add(time.Hour + 2*time.Second), LinkType: capture.LinkUser0, InterfaceName: "s.vrpnlog", Data: []byte("x"), Length: 1},
	}
	r, st := run(t, Config{MaxStreams: 1, IdleTimeout: 5 * time.Minute}, pkts, true)
	eventsEqual(t, r.strings(), []string{
		"open 0", "data 0/1 cookie+a",
		"open 1", "data 1/0 tty",
		"data 0/1 b",
		"close 0/0", "close 0/1",
		// The second serial stream evicts the first (MaxStreams 1), not
		// counting the log's.
		"close 1/0", "close 1/1", "open 2", "data 2/0 x",
		"close 2/0", "close 2/1",
	})
	if s := r.streams[0]; s.Transport != Serial || s.Carries != "vrpn" || s.Link != "s.vrpnlog" {
		t.Errorf("log stream %+v", s.StreamID)
	}
	if r.streams[1].Carries != "" || r.streams[2].Carries != "" {
		t.Errorf("serial streams carry %q, %q", r.streams[1].Carries, r.streams[2].Carries)
	}
	if st.Expired != 0 || st.Evicted != 1 {
		t.Errorf("stats %+v", st)
	}
}
