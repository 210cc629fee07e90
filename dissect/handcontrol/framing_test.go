package handcontrol

import "testing"

// The size field is a u16 of the payload: the largest frame, 65535
// payload bytes and 12 more (protocols.md §1.3), is framed, above the
// framing's default bound.
func TestLargestFrame(t *testing.T) {
	b := frame(codeSetSettings, make([]byte, 0xffff))
	if n, ok := frameSize(b); !ok || n != 0xffff+12 {
		t.Fatalf("frameSize = %d, %v; want %d", n, ok, 0xffff+12)
	}
	if _, _, scope := checkCRC(b); scope != scopeHeader {
		t.Errorf("scope %q, want %q", scope, scopeHeader)
	}
}
