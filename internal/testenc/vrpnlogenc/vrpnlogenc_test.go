package vrpnlogenc

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestMatchesMainline: the encoder writes the first bytes of a real
// mainline log (pcaps/vrpn) byte for byte, from values read
// by hand from its hex dump: the cookie, the description of sender 0
// "VRPN Control" at 1795767320.740834, then of sender 1 "Text0" one
// microsecond later.
func TestMatchesMainline(t *testing.T) {
	real, err := os.ReadFile("../../../pcaps/vrpn/text_tracker_logged.client_in.vrpnlog")
	if err != nil {
		t.Fatal(err)
	}
	b := File(Cookie("07.38", LogNone),
		Entry{Type: SenderDescription, Sender: 0, Time: time.Unix(1795767320, 740834000), Payload: NameBody("VRPN Control")},
		Entry{Type: SenderDescription, Sender: 1, Time: time.Unix(1795767320, 740835000), Payload: NameBody("Text0")},
	)
	if len(b) != 24+24+17+24+10 {
		t.Fatalf("encoded %d bytes", len(b))
	}
	if !bytes.Equal(b, real[:len(b)]) {
		t.Errorf("encoded\n% x\nmainline\n% x", b, real[:len(b)])
	}
}
