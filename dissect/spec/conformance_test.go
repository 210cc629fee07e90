package spec

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/capture"
	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

// serialUnits returns the reads of the example's serial capture, written
// by pcaps/acme/gen.py (not by this package), as conformance units, and
// the bytes of each direction.
func serialUnits(t testing.TB) ([]dissecttest.Unit, [2][]byte) {
	t.Helper()
	src, err := capture.OpenFile(filepath.Join(acmeDir, "acme_servo_serial.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var units []dissecttest.Unit
	for {
		p, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d := dissect.Dir(1)
		if p.Direction == capture.DirOutbound {
			d = 0
		}
		units = append(units, dissecttest.Unit{Dir: d, Data: append([]byte(nil), p.Data...)})
	}
	if len(units) < 50 {
		t.Fatalf("%d reads in the serial capture", len(units))
	}
	var whole [2][]byte
	for _, u := range units {
		whole[u.Dir] = append(whole[u.Dir], u.Data...)
	}
	return units, whole
}

// TestConformance runs the checks every protocol passes on the protocol
// the example file describes, over TCP and serial.
func TestConformance(t *testing.T) {
	units, whole := serialUnits(t)
	dissecttest.Conformance(t, dissecttest.Suite{
		New: func() dissect.Protocol { return loadExample(t) },
		Valid: []dissecttest.Input{
			{Name: "serial reads", Units: units},
			{Name: "each direction whole", Units: []dissecttest.Unit{{Dir: 0, Data: whole[0]}, {Dir: 1, Data: whole[1]}}},
		},
	})
}

// TestEncodeRoundTrip: the description's own encoder writes back the
// frames the independent encoder wrote, byte for byte (self-consistency
// only: the oracle is TestExampleCaptures).
func TestEncodeRoundTrip(t *testing.T) {
	p := loadExample(t)
	reg := dissecttest.Registry(t, nil, p)
	recs := dissecttest.Decode(t, reg, filepath.Join(acmeDir, "acme_servo_serial.pcapng"))
	_, whole := serialUnits(t)
	n := 0
	for _, r := range recs {
		if r.Proto != p.Info().Proto || r.Type == dissect.TypeSkipped {
			continue
		}
		b, err := p.Encode(r.Type, r.Fields)
		if err != nil {
			t.Fatalf("%s at %d: %v", r.Type, r.Offset, err)
		}
		if want := whole[r.Dir][r.Offset : r.Offset+r.Length]; string(b) != string(want) {
			t.Errorf("%s at %d: encoded % x, the capture has % x", r.Type, r.Offset, b, want)
		}
		n++
	}
	if n < 15 {
		t.Errorf("only %d messages encoded", n)
	}
}
