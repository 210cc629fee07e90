package vrpn

import (
	"testing"
	"time"
)

// TestSentTimeSigned: a header's tv_sec and tv_usec are mainline's
// vrpn_int32 (vrpn_Connection.C reads them into a struct timeval through
// vrpn_int32 words): 0xffffffff seconds is −1, one second before 1970,
// not 2106.
func TestSentTimeSigned(t *testing.T) {
	h := described(t)
	for _, tc := range []struct {
		sec, usec uint32
		want      time.Time
	}{
		{0xffffffff, 500000, time.Unix(-1, 500_000_000)},
		{0x80000000, 0, time.Unix(-1<<31, 0)},
		{0x7fffffff, 999999, time.Unix(1<<31-1, 999_999_000)},
		{1795306106, 0xffffffff, time.Unix(1795306106, -1000)},
	} {
		recs := h.feed(t, 0, encMsg(tc.sec, tc.usec, 1, 17, 100, nil), false) // a ping
		if len(recs) != 1 {
			t.Fatalf("%d records", len(recs))
		}
		v, ok := recs[0].Fields.Get("sent")
		if !ok || !v.Time().Equal(tc.want) {
			t.Errorf("tv_sec %#x tv_usec %#x: sent %v, want %v", tc.sec, tc.usec, v.Time().UTC(), tc.want.UTC())
		}
	}
}
