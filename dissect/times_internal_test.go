package dissect

import (
	"net/netip"
	"testing"
	"time"
)

// confirm is a protocol whose messages are one byte each, but whose first
// message is framed only once `after` bytes have come (as a parser that
// confirms a joined stream's first message by the ones after it, VRPN
// without its cookie): until then a direction holds everything it was
// given.
type confirm struct{ after int }

func (c confirm) Info() Info {
	return Info{Name: "confirm", Proto: "confirm", Transports: []Transport{TCP}}
}
func (confirm) Detect(*StreamInfo, Dir, []byte) Verdict { return No }
func (c confirm) NewParser(*StreamInfo) Parser          { return c }
func (confirm) Sync(_ *Ctx, b []byte) (int, bool)       { return 0, true }
func (c confirm) Parse(x *Ctx, b []byte) (int, error) {
	if x.Offset == 0 && len(b) < c.after {
		return 0, ErrNeedMore
	}
	return 1, nil
}

// heldTimes feeds n one-byte units, unit i numbered i+1 at t0 + i/2 ms
// (two units a time, as packets captured in the same microsecond), to a
// stream whose direction starts in a resync that holds them until `after`
// bytes have come, and returns the records' stamps in offset order and
// the most stamp ranges the direction held at once.
func heldTimes(t *testing.T, n, after int) ([]Stamp, int) {
	t.Helper()
	reg, err := NewRegistry(confirm{after})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := reg.ParseDecodeAs("tcp.port==2,confirm")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(rule)
	info := StreamInfo{StreamID: StreamID{Transport: TCP, Addr: [2]netip.AddrPort{netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2")}}}
	var got []Stamp
	s := NewStream(info, reg, SinkFunc(func(r *Record) error {
		if r.Type != "unknown" || r.Offset != int64(len(got)) || r.Length != 1 {
			t.Fatalf("record %s at %d+%d, want message %d", r.Type, r.Offset, r.Length, len(got))
		}
		got = append(got, Stamp{Time: r.Time, Frame: r.Frame})
		return nil
	}), StreamOptions{})
	most := 0
	for i := range n {
		s.DataAt(0, unitStamp(i), []byte{byte(i)})
		d := &s.dirs[0]
		most = max(most, len(d.times)-d.th)
	}
	s.EndAt(0, Stamp{Time: unitStamp(n).Time.Add(time.Hour), Frame: int64(n + 1)})
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	return got, most
}

// unitStamp is the stamp of heldTimes's unit i.
func unitStamp(i int) Stamp {
	return Stamp{Time: time.Unix(1700000000, 0).Add(time.Duration(i/2) * time.Millisecond), Frame: int64(i + 1)}
}

// TestHeldBytesKeepTheirTimes: bytes a resync holds until it is sure
// become records stamped with the times and numbers of their own units,
// not those of the unit that released them; units of the same time keep
// their numbers apart.
func TestHeldBytesKeepTheirTimes(t *testing.T) {
	got, _ := heldTimes(t, 3000, 2500)
	for i, g := range got {
		if want := unitStamp(i); !g.Time.Equal(want.Time) || g.Frame != want.Frame {
			t.Fatalf("record %d at %v #%d, want %v #%d (its own unit's)", i, g.Time, g.Frame, want.Time, want.Frame)
		}
	}
}

// TestHeldTimesAreBounded: a resync that holds more units than
// maxByteTimes keeps at most that many stamp ranges; merged ranges keep
// the later stamp, so a record is never stamped before its unit, and the
// stamps never decrease.
func TestHeldTimesAreBounded(t *testing.T) {
	n := 3 * maxByteTimes
	got, most := heldTimes(t, n, n-10)
	if most > maxByteTimes {
		t.Errorf("%d time ranges held, want at most %d", most, maxByteTimes)
	}
	late := 0
	for i, g := range got {
		want := unitStamp(i)
		if g.Before(want) || i > 0 && g.Before(got[i-1]) {
			t.Fatalf("record %d at %v #%d: before its unit (%v #%d) or its predecessor", i, g.Time, g.Frame, want.Time, want.Frame)
		}
		if g.Frame != want.Frame {
			late++
		}
	}
	if late == 0 || late == n {
		t.Errorf("%d of %d records stamped late: want some (the ranges were merged), not all", late, n)
	}
}
