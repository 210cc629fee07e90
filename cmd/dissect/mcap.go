package main

import (
	"errors"
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
	version, _, _ := strings.Cut(versionLine(), "\n")
	m, err := mcapout.New(w, mcapout.Options{Library: version, Decl: reg.Decl})
	if err != nil {
		if c, ok := w.(io.Closer); ok {
			c.Close()
		}
		return nil, err
	}
	return m, nil
}
