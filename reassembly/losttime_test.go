package reassembly

import (
	"fmt"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/pktbuild"
)

// timed records the stamp of each data and gap event: its time in ms
// after t0 and its packet number.
type timed struct {
	*recorder
	at []string
}

func (r *timed) Data(s *Stream, d Dir, t Stamp, data []byte) {
	r.at = append(r.at, fmt.Sprintf("data %d/%d %s @%d#%d", s.ID, d, data, t.Time.Sub(t0).Milliseconds(), t.Frame))
	r.recorder.Data(s, d, t, data)
}

func (r *timed) Gap(s *Stream, d Dir, t Stamp, n int64) {
	r.at = append(r.at, fmt.Sprintf("gap %d/%d %d @%d#%d", s.ID, d, n, t.Time.Sub(t0).Milliseconds(), t.Frame))
	r.recorder.Gap(s, d, t, n)
}

// TestLostHoleKeepsTimes: data held behind a hole that is then known
// lost (the peer acknowledged past it) is delivered at the time its own
// segment was captured, not the acknowledgment's; the acknowledgment is
// read before the data of its own segment. Data held behind a hole that a
// later segment fills is delivered at that segment's time. The feed
// stamps packet k at k ms; its number is k+1. The numbers go with the
// times.
func TestLostHoleKeepsTimes(t *testing.T) {
	c := pktbuild.NewConn(cli4, srv4, 1000, 5000)
	var f feed
	f.e = eth
	f.seg(c.Handshake()...)            // packets 0-2
	f.seg(c.Send(C, []byte("aa")))     // 3
	c.Skip(C, 4)                       // never captured
	f.seg(c.Send(C, []byte("dd")))     // 4: held behind the hole
	f.seg(c.Send(S, []byte("pong")))   // 5: acknowledges all of C's bytes
	lateFill := c.Send(C, []byte("e")) // [8,9)
	f.seg(c.Send(C, []byte("ff")))     // 6: [9,11), held behind [8,9)
	f.seg(lateFill)                    // 7: fills it
	r := &timed{recorder: newRecorder()}
	a := New(r, Config{})
	for _, p := range f.pkts {
		a.Packet(p)
	}
	a.Flush(t0.Add(time.Hour))
	want := []string{
		"data 0/0 aa @3#4", "gap 0/0 4 @4#5", "data 0/0 dd @4#5", "data 0/1 pong @5#6",
		"data 0/0 e @7#8", "data 0/0 ff @7#8",
	}
	if fmt.Sprint(r.at) != fmt.Sprint(want) {
		t.Errorf("events\n got %q\nwant %q", r.at, want)
	}
}
