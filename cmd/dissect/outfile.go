package main

import (
	"fmt"
	"io"
	"os"
)

// recordsOut is where the text output forms (table, json, fields) write:
// stdout, or the file of --out once the flags have been checked. It is
// handed to the writers before the file exists, so that a run refused for
// a bad flag neither creates nor truncates the file.
type recordsOut struct {
	w    io.Writer
	path string   // --out FILE; "" for stdout
	f    *os.File // the file, once created
}

func (r *recordsOut) Write(p []byte) (int, error) { return r.w.Write(p) }

// textOutput reports whether format writes text to stdout (and so to
// --out FILE): table, json and fields. The other forms give --out their
// own meaning (parquet: a directory; mcap: a file of their own).
func textOutput(format string) bool {
	switch format {
	case "table", "json", "jsonl", "fields":
		return true
	}
	return false
}

// outTarget returns the writer of the text output forms: stdout, or a
// recordsOut for --out FILE that openOut later points at the file.
// --out with -q and nothing else to write (no -z) is a usage error: the
// file would stay empty.
func (o *readOpts) outTarget(stdout io.Writer) (io.Writer, error) {
	if o.quiet && o.outPath != "" && (o.format == "parquet" || o.format == "mcap") {
		return nil, usageError{fmt.Errorf("-q writes no records: -o %s --out %s would stay empty", o.format, o.outPath)}
	}
	if o.outPath == "" || o.outPath == "-" || !textOutput(o.format) {
		return stdout, nil
	}
	if o.quiet && len(o.q.stats) == 0 {
		return nil, usageError{fmt.Errorf("-q writes no records: --out %s would stay empty (-q -z STATS --out FILE writes the statistics)", o.outPath)}
	}
	o.out = &recordsOut{w: stdout, path: o.outPath}
	return o.out, nil
}

// openOut creates (or truncates) the file of --out, once every flag has
// been checked; the records and the statistics go to it as they would
// go to stdout (dissect -o json --out F is dissect -o json > F).
func (o *readOpts) openOut() error {
	if o.out == nil {
		return nil
	}
	f, err := os.Create(o.out.path)
	if err != nil {
		return fmt.Errorf("--out: %w", err) // names the file: "open PATH: ..."
	}
	o.out.f, o.out.w = f, f
	return nil
}

// closeOut closes the file of --out at the very end of a run, after the
// statistics; a failure to write it is the run's error when it has none.
func (o *readOpts) closeOut(err error) error {
	if o.out == nil || o.out.f == nil {
		return err
	}
	f := o.out.f
	o.out.f = nil
	if cerr := f.Close(); cerr != nil && err == nil {
		return fmt.Errorf("--out: %w", cerr)
	}
	return err
}

// recordsWriter is where the records go, for deciding whether they go
// to a terminal: the file of --out, else stdout.
func (o *readOpts) recordsWriter(stdout io.Writer) io.Writer {
	if o.out != nil && o.out.f != nil {
		return o.out.f
	}
	return stdout
}
