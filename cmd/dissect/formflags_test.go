package main

import (
	"strings"
	"testing"
)

// TestFormFlagsRefused: a flag of one output form, given with another
// form, is a usage error naming both, not silently ignored; with its own
// form it is taken.
func TestFormFlagsRefused(t *testing.T) {
	capture := pcapDir + "/vrpn_tcp_only.pcap"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--speed", "2"}, "--speed applies to -o foxglove, not -o table"},
		{[]string{"-o", "json", "--mcap-compression", "zstd"}, "--mcap-compression applies to -o mcap, not -o json"},
		{[]string{"-T", "fields", "-e", "type", "--part-id", "x"}, "--part-id applies to -o parquet, not -o fields"},
		{[]string{"-o", "mcap", "--max-partitions", "3"}, "--max-partitions applies to -o parquet, not -o mcap"},
		{[]string{"-o", "json", "--parquet-compression", "zstd"}, "--parquet-compression applies to -o parquet, not -o json"},
	} {
		_, stderr, code := cli(t, append(c.args, capture)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
	out, stderr, code := cli(t, "-o", "mcap", "--mcap-compression", "zstd", "--out", t.TempDir()+"/x.mcap", "--no-summary", capture)
	if code != 0 {
		t.Fatalf("-o mcap --mcap-compression zstd: exit %d: %s%s", code, out, stderr)
	}
}
