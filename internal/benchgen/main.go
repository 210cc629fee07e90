// Command benchgen writes the large Deltarobot captures the figures of
// docs/performance.md are measured on, and the Wireshark Lua dissector
// tshark is compared with:
//
//	go run ./internal/benchgen -size-mb 50 -o d50.pcap     # d50.pcap and d50.pcap.stats.json
//	go run ./internal/benchgen -lua -o deltarobot.lua       # the Lua dissector for tshark
//
// A capture holds -conns TCP connections to port 4000 (the Qt leader at
// 192.0.2.1, the Unity followers at 198.51.100.10 and up), each with the
// three-way handshake; magic and version both ways; the leader's 3000-byte
// curve; then ticks of the three 128-bit vector messages (54 bytes, one
// tick a millisecond) with a ping every -ping-every ticks, each answered by
// a pong in the follower's first ACK after the ping's last byte. The
// leader's bytes are cut into segments at any byte: 70% a full -mss, 30% a
// random 1..MSS, so messages straddle segments. Both ends send an end of transmission, then FIN. IP
// and TCP checksums are correct. The sidecar OUT.stats.json holds the exact
// count of every message id; the same -seed writes the same file.
//
// The messages come from internal/testenc/deltaenc (written from the spec,
// apart from the decoder) and the packets from internal/pktbuild.
package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

//go:embed deltarobot.lua
var luaDissector []byte

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg Config
	fs.Float64Var(&cfg.SizeMB, "size-mb", 50, "target file size in MB (1e6 bytes)")
	fs.IntVar(&cfg.Conns, "conns", 4, "concurrent TCP connections")
	fs.IntVar(&cfg.MSS, "mss", 1448, "bytes of a full TCP segment")
	fs.IntVar(&cfg.PingEvery, "ping-every", 1000, "ticks (3 vector messages each) between pings")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed: the same seed writes the same file")
	out := fs.String("o", "", "the capture to write (required); the counts go to OUT.stats.json")
	lua := fs.Bool("lua", false, "write the Wireshark Lua dissector to -o instead of a capture")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: benchgen [flags] -o OUT.pcap    (or -lua -o deltarobot.lua)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *out == "" || fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("%w: -o OUT is required and nothing else", errUsage)
	}
	if *lua {
		return os.WriteFile(*out, luaDissector, 0o644)
	}
	if err := cfg.check(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	st, err := writeCapture(*out, cfg)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out+".stats.json", append(b, '\n'), 0o644); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

// writeCapture writes the capture to path; a failure removes what was
// written.
func writeCapture(path string, cfg Config) (Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	st, err := Generate(f, cfg)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return Stats{}, fmt.Errorf("%s: %w", path, err)
	}
	st.File = filepath.Base(path)
	return st, nil
}
