// Command loadgen sends Deltarobot traffic over one loopback TCP connection
// at a paced rate, to measure how fast a live capture keeps up
// (docs/performance-4-13.md). It listens on 127.0.0.1:PORT, connects to itself,
// sends the handshake both ways, then actuator positions (18 bytes each,
// the spec's vector for (1, 2, 3, 0)) from the leader for the given time,
// several per write, and closes. It prints what it sent. Loopback only.
//
//	go run ./internal/loadgen -port 4000 -rate 10000000 -batch 1000 -duration 3s
package main

import (
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	port := flag.Int("port", 4000, "TCP port on 127.0.0.1")
	rate := flag.Int("rate", 1000000, "messages per second")
	batch := flag.Int("batch", 100, "messages per write")
	dur := flag.Duration("duration", 3*time.Second, "how long to send")
	flag.Parse()
	if err := run(*port, *rate, *batch, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func run(port, rate, batch int, dur time.Duration) error {
	if rate <= 0 || batch <= 0 || batch > 1<<20 || dur <= 0 || dur > time.Hour {
		return fmt.Errorf("bad arguments")
	}
	ln, err := net.Listen("tcp4", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	defer ln.Close()
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		return err
	}
	server, err := ln.Accept()
	if err != nil {
		return err
	}
	drained := make(chan int64, 1)
	go func() {
		n, _ := io.Copy(io.Discard, client)
		drained <- n
	}()
	hs := mustHex("013044656c7461525672")
	hs = append(hs, mustHex("022001000000")...)
	if _, err := client.Write(hs); err != nil {
		return err
	}
	pos := mustHex("03400000803f000000400000404000000000")
	buf := make([]byte, 0, len(pos)*batch)
	for range batch {
		buf = append(buf, pos...)
	}
	if _, err := server.Write(hs); err != nil {
		return err
	}
	start := time.Now()
	var sent int64
	interval := time.Duration(float64(time.Second) * float64(batch) / float64(rate))
	next := start
	for time.Since(start) < dur {
		if _, err := server.Write(buf); err != nil {
			return err
		}
		sent += int64(batch)
		next = next.Add(interval)
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
	}
	el := time.Since(start)
	server.Close()
	got := <-drained
	client.Close()
	fmt.Printf("sent %d positions (+2 handshake messages each way) in %v: %.0f msg/s, %.1f MB/s; %d bytes received\n",
		sent, el.Round(time.Millisecond), float64(sent)/el.Seconds(), float64(sent)*18/el.Seconds()/1e6, got)
	return nil
}
