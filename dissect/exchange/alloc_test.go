package exchange_test

import (
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect/exchange"
)

// steady is one ping and its pong under each protocol's kind of rules:
// keyed by a number (Deltarobot), by a name with a shared bound
// (VRPN), unkeyed in order with a timeout (HandControl).
var steady = []struct {
	name  string
	rules exchange.Rules
	key   exchange.Key
}{
	{"uint", exchange.Rules{Bound: 64}, exchange.Uint(0x0123456789abcdef)},
	{"name", exchange.Rules{Bound: 512, Shared: true, PerKey: 8}, exchange.Str("Tracker0")},
	{"inorder", exchange.Rules{Bound: 8, Shared: true, InOrder: true, Timeout: 10 * time.Second}, exchange.Key{}},
}

// TestSteadyStateAllocs: once a direction's list has grown, a request and
// its reply allocate nothing (counted allocations, not time).
func TestSteadyStateAllocs(t *testing.T) {
	for _, s := range steady {
		m := exchange.Matcher{Rules: s.rules}
		now := time.Unix(0, 0)
		step := func() {
			now = now.Add(time.Millisecond)
			m.Request(0, 0, s.key, now, 0)
			m.Request(0, 1, s.key, now, 0)
			if _, ok, _ := m.Reply(1, s.key, now.Add(time.Microsecond), 1, 0); !ok {
				t.Fatal("no match")
			}
			m.Reply(1, s.key, now.Add(time.Microsecond), 1, 0)
		}
		step()
		if n := testing.AllocsPerRun(100, step); n != 0 {
			t.Errorf("%s: %v allocations per request and reply", s.name, n)
		}
	}
}

func BenchmarkMatcher(b *testing.B) {
	for _, s := range steady {
		b.Run(s.name, func(b *testing.B) {
			m := exchange.Matcher{Rules: s.rules}
			now := time.Unix(0, 0)
			b.ReportAllocs()
			for b.Loop() {
				now = now.Add(time.Millisecond)
				m.Request(0, 0, s.key, now, 0)
				if _, ok, _ := m.Reply(1, s.key, now, 0); !ok {
					b.Fatal("no match")
				}
			}
		})
	}
}
