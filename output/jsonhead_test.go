package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// Records whose streams collide in the head cache, whose strings share
// contents at other addresses or addresses with other lengths, and whose
// transport changes under one stream number, each get their own proto,
// transport, stream, src and dst, read back with encoding/json.
func TestJSONHeadOfEveryRecord(t *testing.T) {
	addr := "10.0.0.1:40000"
	texts := []string{addr, strings.Clone(addr), "10.0.0.2:40000", addr[:8], "host", "/dev/ttyUSB0", "", "a\"b\u2028"}
	protos := []string{"vrpn", strings.Clone("vrpn"), "abcd", "deltarobot", ""}
	transports := []dissect.Transport{dissect.TCP, dissect.UDP, dissect.Serial}
	streams := []int{0, 1, 32, 64, 96, 7}
	for i := range 200 { // equal lengths, so that some share a slot
		texts = append(texts, fmt.Sprintf("10.0.%03d.9:4000", i))
	}
	r := rand.New(rand.NewPCG(3, 4))
	var recs []dissect.Record
	for range 20000 {
		recs = append(recs, dissect.Record{
			Proto:     protos[r.IntN(len(protos))],
			Transport: transports[r.IntN(len(transports))],
			Stream:    streams[r.IntN(len(streams))],
			Src:       texts[r.IntN(len(texts))],
			Dst:       texts[r.IntN(len(texts))],
			Type:      "t",
		})
	}
	var out bytes.Buffer
	j := NewJSON(&out, false)
	for i := range recs {
		if err := j.Record(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	j.Flush()
	sc := bufio.NewScanner(&out)
	n := 0
	for ; sc.Scan(); n++ {
		var got struct {
			Proto     string
			Transport string
			Stream    int
			Src, Dst  string
		}
		if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
			t.Fatalf("line %d: %v: %s", n, err, sc.Text())
		}
		w := &recs[n]
		if got.Proto != w.Proto || got.Transport != w.Transport.String() || got.Stream != w.Stream || got.Src != w.Src || got.Dst != w.Dst {
			t.Fatalf("line %d: %s\nwant proto %q transport %s stream %d src %q dst %q", n, sc.Text(), w.Proto, w.Transport, w.Stream, w.Src, w.Dst)
		}
	}
	if n != len(recs) {
		t.Fatalf("%d lines for %d records", n, len(recs))
	}
}
