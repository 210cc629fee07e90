package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// -Y and -z on a live capture: only the matching record is written, the
// statistics follow the records as JSON rows, and the filter's count goes
// to stderr.
func TestLiveDisplayFilterAndStats(t *testing.T) {
	lvNeedCapture(t)
	_, port := lvListenUDP(t)
	r := lvStart(t, "-i", "lo", "-o", "json", "-c", "5", "-f", fmt.Sprintf("udp dst port %d", port),
		"-d", fmt.Sprintf("udp.port==%d,vrpn", port), "-Y", `vrpn.name == "Sender1"`, "-z", "conv")
	tx := lvDialUDP(t, port)
	for i := range 5 {
		lvWriteAll(t, tx, lvVrpnDescription(int32(i), -1, uint32(i), fmt.Sprintf("Sender%d", i)))
		time.Sleep(5 * time.Millisecond)
	}
	if code := r.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.stderr.String())
	}
	// Records first, then the statistics rows.
	out := r.stdout.String()
	i := strings.Index(out, `{"stat":`)
	if i < 0 {
		t.Fatalf("no statistics:\n%s", out)
	}
	recs := parseJSONL(t, out[:i])
	rows := jsonLines(t, out[i:])
	for _, m := range rows {
		if _, ok := m["stat"]; !ok {
			t.Fatalf("a record after the statistics:\n%s", out)
		}
	}
	src := tx.LocalAddr().String()
	lvCheck(t, recs, []lvWant{{src, "sender_description", map[string]string{"name": `"Sender1"`}}})
	if len(rows) != 1 || rows[0]["stat"] != "conv" || rows[0]["messages"] != 1.0 {
		t.Errorf("conv rows %v: want one stream with the one matching message", rows)
	}
	if !strings.Contains(r.stderr.String(), "display filter: 1 of 5 records matched") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}
}
