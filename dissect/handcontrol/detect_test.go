package handcontrol

import (
	"bytes"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/dissecttest"
)

func TestDetect(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	serial := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.Serial}}
	tcp := &dissect.StreamInfo{StreamID: dissect.StreamID{Transport: dissect.TCP}}
	noise := bytes.Repeat([]byte{0x5a}, 300)
	big := frame(codeGetGestures, bytes.Repeat(getGestures118, 10)) // 1192 bytes
	for _, c := range []struct {
		name string
		s    *dissect.StreamInfo
		b    []byte
		want dissect.Verdict
	}{
		{"frame", serial, vGetSettingsReq, dissect.Yes},
		{"frame on tcp", tcp, vSetPositions, dissect.Yes},
		{"sfd prefix", serial, sfd[:5], dissect.Maybe},
		{"header only", serial, vSetPositions[:11], dissect.Maybe},
		{"frame less crc", serial, vSetPositions[:21], dissect.Maybe},
		{"§1.9 leading garbage", serial, cat(garbage8, vACK), dissect.Yes},
		{"garbage then frame", serial, cat(noise, garbage10, badSFD, vSetPositions), dissect.Yes},
		{"bad crc then good frame", serial, cat(vBadPerform, vACK), dissect.Yes},
		{"bad crc only", serial, cat(vBadPerform, noise, noise), dissect.No},
		{"bad crc, short", serial, vBadSetSettings, dissect.Maybe},
		{"no sfd in window", serial, cat(noise, noise), dissect.No},
		{"sfd past window", serial, cat(noise, noise, vACK), dissect.No},
		{"short noise", serial, noise[:100], dissect.Maybe},
		{"tcp not at start", tcp, cat(garbage8, vACK), dissect.No},
		{"tcp other protocol", tcp, []byte("vrpn: ver. 07.38  0\x00"), dissect.No},
		{"big frame, header", serial, big[:200], dissect.Yes},
		{"big frame, unknown code", serial, append(append([]byte{}, big[:8]...), append([]byte{0x40}, big[9:200]...)...), dissect.Maybe},
	} {
		if got := p.Detect(c.s, 0, c.b); got != c.want {
			t.Errorf("%s: Detect = %v, want %v", c.name, got, c.want)
		}
	}
	if in := p.Info(); in.Name != "handcontrol" || in.Proto != "handcontrol" || len(in.Ports) != 0 || in.Detection == "" ||
		len(in.Transports) != 2 || in.Transports[0] != dissect.Serial || in.Transports[1] != dissect.TCP {
		t.Errorf("Info = %+v", in)
	}
}

// TestDetectStream checks that a serial stream is recognised by content,
// without a decode-as rule.
func TestDetectStream(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := dissect.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := feedStream(t, reg, true, []event{
		{dir: 1, at: t0, data: cat(garbage8, frame(codeTelemetry, telemetryV1))},
		{dir: 1, at: t0}, {dir: 0, at: t0},
	}, nil)
	if len(recs) != 2 || recs[0].Type != dissect.TypeSkipped || recs[1].Type != TypeTelemetry || recs[1].Proto != "handcontrol" {
		t.Fatalf("records %+v", recs)
	}

	// TCP: the side that opened the connection is the host.
	var sink dissecttest.Collector
	info := dissect.StreamInfo{StreamID: dissect.StreamID{ID: 5, Transport: dissect.TCP}, Name: [2]string{"192.0.2.1:50000", "192.0.2.2:7000"}}
	st := dissect.NewStream(info, reg, &sink, dissect.StreamOptions{Decode: true})
	st.Data(0, t0, vSetPositions)
	st.Data(1, t0.Add(ms(2)), vACK)
	st.End(0, t0.Add(ms(3)))
	st.End(1, t0.Add(ms(3)))
	if len(sink.Records) != 2 {
		t.Fatalf("%d records", len(sink.Records))
	}
	checkFields(t, sink.Records[1].Fields, resp(1, 0x6b, true, obj(), 11, 2))
	if role, _ := sink.Records[0].Fields.Get("role"); role.Str() != "request" {
		t.Errorf("role %q", role.Str())
	}
}
