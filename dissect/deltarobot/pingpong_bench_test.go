package deltarobot_test

import "testing"

// BenchmarkPingPong measures a ping in one direction and its pong in the
// other, parsed directly with fields: the cost of the request/reply
// matching in steady state.
func BenchmarkPingPong(b *testing.B) {
	s := newSession(true)
	s.prime(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Parse(0, vPing); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Parse(1, vPong); err != nil {
			b.Fatal(err)
		}
		if _, ok := s.Rec.Fields.Get("rtt_ms"); !ok {
			b.Fatal("pong without rtt_ms")
		}
	}
}
