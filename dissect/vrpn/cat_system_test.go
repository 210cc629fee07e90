package vrpn

import (
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// TestLocalNoticesNeverOnWire checks the package doc's claim on every real
// mainline capture: the connection notices' types are described on the
// wire, their messages never are.
func TestLocalNoticesNeverOnWire(t *testing.T) {
	local := map[string]bool{
		"VRPN_Connection_Got_First_Connection": true, "VRPN_Connection_Got_Connection": true,
		"VRPN_Connection_Dropped_Connection": true, "VRPN_Connection_Dropped_Last_Connection": true,
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "mainline", "*.pcap"))
	shared, _ := filepath.Glob(pcapsVRPN("*.pcap"))
	if len(files) == 0 || len(shared) == 0 {
		t.Fatal("no capture in testdata/mainline or pcaps/vrpn")
	}
	files = append(files, shared...)
	reg, _ := registry(t)
	for _, f := range files {
		described := map[string]bool{}
		for _, r := range dissecttest.Decode(t, reg, f) {
			if r.Type == TypeTypeDescription {
				if n, _ := r.Fields.Get("name"); local[n.Str()] {
					described[n.Str()] = true
				}
			}
			if local[r.Type] {
				t.Errorf("%s @%d: a %s message on the wire", f, r.Offset, r.Type)
			}
		}
		if len(described) != len(local) {
			t.Errorf("%s: %d of the %d notice types described", f, len(described), len(local))
		}
	}
}
