package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/mcapout"
)

// mcapOutput returns the -o mcap writer: an MCAP file for Foxglove and
// Lichtblick (docs/mcap.md) in --out FILE, or on stdout when it is not a
// terminal. The file is completed (summary, footer) when the run ends.
// The registry's declarations give each record topic its schema and the
// pictures drawn.
func (o *readOpts) mcapOutput(stdout io.Writer, reg *dissect.Registry) (sink, error) {
	switch o.mcapComp {
	case mcapout.CompressionLZ4, mcapout.CompressionZstd, mcapout.CompressionNone:
	default:
		return nil, usageError{fmt.Errorf("--mcap-compression %q: want lz4, zstd or none", o.mcapComp)}
	}
	if err := checkMcapEncoding(o.mcapEnc); err != nil {
		return nil, err
	}
	w := io.Writer(struct{ io.Writer }{stdout}) // stdout is not ours to close
	if o.outPath == "" || o.outPath == "-" {
		if isTerminal(stdout) {
			return nil, usageError{errors.New("-o mcap writes a binary file: give --out FILE, or redirect stdout (> run.mcap)")}
		}
	} else {
		f, err := os.Create(o.outPath)
		if err != nil {
			return nil, err
		}
		w = f
	}
	// Buffered, so that the header is written with the first records: a
	// full disk or a closed reader then fails during the run, which ends
	// with its summary as every output form does, not before it.
	bw := &bufferedOut{Writer: bufio.NewWriterSize(w, 64<<10)}
	bw.closer, _ = w.(io.Closer)
	version, _, _ := strings.Cut(versionLine(), "\n")
	// Chunks are compressed on --threads goroutines (2 when not given)
	// while the next is filled; --threads 1 compresses them in line.
	workers := 2
	if o.threads > 0 {
		workers = o.threads
	}
	m, err := mcapout.New(bw, mcapout.Options{Library: version, Decl: reg.Decl, Workers: workers, Compression: o.mcapComp, Encoding: o.mcapEnc})
	if err != nil {
		if c, ok := w.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	return m, nil
}

// checkMcapEncoding refuses a --mcap-encoding other than protobuf and json.
func checkMcapEncoding(e string) error {
	switch e {
	case mcapout.EncodingProtobuf, mcapout.EncodingJSON:
		return nil
	}
	return usageError{fmt.Errorf("--mcap-encoding %q: want protobuf or json", e)}
}

// bufferedOut is the MCAP file's buffer; Close writes what it holds and
// closes the file (not stdout).
type bufferedOut struct {
	*bufio.Writer
	closer io.Closer
}

func (b *bufferedOut) Close() error {
	err := b.Flush()
	if b.closer != nil {
		if cerr := b.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
