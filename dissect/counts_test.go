package dissect_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
)

func TestTypeCountsOrderAndTotals(t *testing.T) {
	var c dissect.TypeCounts
	c.Add("deltarobot", "ping")
	c.Add("deltarobot", "pong")
	c.AddN("vrpn", "cookie", 2)
	c.Add("deltarobot", "ping")
	// the same type name from another protocol is another row; Go stores
	// equal string constants once, so this is also the same address
	c.Add("vrpn", "ping")
	// equal contents at another address count in the same row
	c.Add(strings.Clone("deltarobot"), strings.Clone("ping"))
	want := []dissect.TypeCount{
		{Proto: "deltarobot", Type: "ping", Count: 3},
		{Proto: "deltarobot", Type: "pong", Count: 1},
		{Proto: "vrpn", Type: "cookie", Count: 2},
		{Proto: "vrpn", Type: "ping", Count: 1},
	}
	if got := c.Rows(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if c.Total() != 7 || c.Len() != 4 {
		t.Errorf("total %d len %d, want 7 and 4", c.Total(), c.Len())
	}
	rows := c.Rows()
	rows[0].Count = 100
	if c.Rows()[0].Count != 3 {
		t.Error("Rows does not return a copy")
	}
}

func TestTypeCountsMerge(t *testing.T) {
	var a, b dissect.TypeCounts
	a.Add("p", "x")
	b.AddN("p", "y", 5)
	b.AddN("p", "x", 2)
	a.Merge(&b)
	a.Merge(nil)
	want := []dissect.TypeCount{{Proto: "p", Type: "x", Count: 3}, {Proto: "p", Type: "y", Count: 5}}
	if got := a.Rows(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	a.Merge(&a)
	if a.Total() != 16 {
		t.Errorf("self-merge total %d, want 16", a.Total())
	}
}

// TestTypeCountsManyTypes goes past the linear search, to the map, with
// type strings built at run time (each at its own address) as well as
// reused ones.
func TestTypeCountsManyTypes(t *testing.T) {
	var c dissect.TypeCounts
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("type%d", i)
	}
	for round := 1; round <= 3; round++ {
		for i, n := range names {
			c.AddN("p", n, int64(i))
			c.Add("p", fmt.Sprintf("type%d", i)) // same contents, new address
		}
	}
	rows := c.Rows()
	if len(rows) != len(names) {
		t.Fatalf("%d rows, want %d", len(rows), len(names))
	}
	for i, r := range rows {
		if r.Type != names[i] || r.Count != 3*int64(i+1) {
			t.Fatalf("row %d = %+v, want %s × %d", i, r, names[i], 3*(i+1))
		}
	}
}

func TestTypeCountsAddAllocatesNothing(t *testing.T) {
	var c dissect.TypeCounts
	c.Add("deltarobot", "actuator_position")
	c.Add("deltarobot", "ping")
	if n := testing.AllocsPerRun(1000, func() {
		c.Add("deltarobot", "actuator_position")
		c.Add("deltarobot", "ping")
	}); n != 0 {
		t.Errorf("Add allocates %v times per run", n)
	}
}

func TestStreamCountOnlyCountsPerType(t *testing.T) {
	reg := dissectRegistryWithRule(t)
	col := &collector{}
	s := dissect.NewStream(tcpInfo(7000), reg, col, dissect.StreamOptions{CountOnly: true})
	// 3 "msg", 1 "big", then a malformed byte (sent as skipped)
	s.Data(0, timeAt(1), []byte{1, 'a', 2, 'b', 'c', 0xFE, 0, 0, 0, 1, 'z', 1, 'd', 0xC8})
	s.End(0, timeAt(2))
	counts := []dissect.TypeCount{{Proto: "toy", Type: "msg", Count: 3}, {Proto: "toy", Type: "big", Count: 1}}
	if got := s.Counts().Rows(); fmt.Sprint(got) != fmt.Sprint(counts) {
		t.Errorf("counts %v, want %v", got, counts)
	}
	checkRecords(t, col.recs, "10.0.0.1:5000", []want{{"skipped", 13, 1}})
}

func BenchmarkTypeCountsAdd(b *testing.B) {
	var c dissect.TypeCounts
	types := []string{"actuator_position", "ping", "pong", "curve", "current_direction"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Add("deltarobot", types[i%len(types)])
	}
}

func TestDefaultLimitsIsAFreshValue(t *testing.T) {
	l := dissect.DefaultLimits()
	l.MaxMessage = 1
	if dissect.DefaultLimits().MaxMessage != 1<<20 {
		t.Error("DefaultLimits returned shared state")
	}
}

// TestRegistryKeepsItsOwnInfo: changing what Info returned, or the slice
// Protocols returned, changes nothing in the registry.
func TestRegistryKeepsItsOwnInfo(t *testing.T) {
	p := &toy{ports: []dissect.Port{{Transport: dissect.TCP, Port: 7001}}}
	reg, err := dissect.NewRegistry(p)
	if err != nil {
		t.Fatal(err)
	}
	ps := reg.Protocols()
	ps[0] = nil
	p.ports[0].Port = 1 // the toy's Info shares this slice: the registry must not
	if reg.Protocols()[0] == nil {
		t.Error("Protocols returned the registry's own slice")
	}
	col := &collector{}
	s := dissect.NewStream(tcpInfo(7001), reg, col, dissect.StreamOptions{})
	s.Data(0, timeAt(1), []byte{1, 'a'})
	s.End(0, timeAt(1))
	if s.Protocol() == nil {
		t.Error("default port read after NewRegistry, not kept")
	}
}

func dissectRegistryWithRule(t *testing.T) *dissect.Registry {
	t.Helper()
	reg, err := dissect.NewRegistry(&toy{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reg.ParseDecodeAs("tcp.port==7000,toy")
	if err != nil {
		t.Fatal(err)
	}
	reg.AddRule(r)
	return reg
}

func timeAt(sec int64) time.Time { return time.Unix(sec, 0) }

// Counts equal a count by contents, in order of first appearance, for a
// random mix of types that collide in the address caches: shared type
// names across protocols, prefixes at the same address, equal contents at
// other addresses, and more types than any cache holds.
func TestTypeCountsAgainstAMap(t *testing.T) {
	base := "actuator_position_current_direction"
	types := []string{base, base[:8], base[:17], strings.Clone(base[:8]), "ping", "pong", "unknown"}
	for i := range 40 {
		types = append(types, fmt.Sprintf("type%02d", i))
	}
	protos := []string{"deltarobot", "vrpn", strings.Clone("vrpn"), "vrpn"[:2], "roid"}
	var c dissect.TypeCounts
	want := map[[2]string]int64{}
	var order [][2]string
	seed := uint32(1)
	for i := range 200000 {
		seed = seed*1664525 + 1013904223
		p, ty := protos[seed>>8%uint32(len(protos))], types[seed>>16%uint32(len(types))]
		n := int64(i%3 + 1)
		c.AddN(p, ty, n)
		k := [2]string{p, ty}
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		want[k] += n
	}
	rows := c.Rows()
	if len(rows) != len(order) {
		t.Fatalf("%d rows, want %d", len(rows), len(order))
	}
	for i, r := range rows {
		if k := order[i]; r.Proto != k[0] || r.Type != k[1] || r.Count != want[k] {
			t.Fatalf("row %d = %+v, want %v × %d", i, r, k, want[k])
		}
	}
}
