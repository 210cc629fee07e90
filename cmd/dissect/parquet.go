package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output/parquetout"
	"github.com/dissect-tools/dissect/pipeline"
)

// parquetOutput returns the -o parquet writer (a lake in --out DIR, see
// docs/scale.md and package parquetout), its tables typed from the
// protocols' declarations. The capture column is set by nameCaptures as
// the files are read.
func (o *readOpts) parquetOutput(reg *dissect.Registry) (sink, error) {
	if o.outPath == "" {
		return nil, usageError{errors.New("-o parquet needs --out DIR, the lake's directory")}
	}
	if o.maxParts < 1 {
		return nil, usageError{fmt.Errorf("--max-partitions %d: want at least 1", o.maxParts)}
	}
	if err := parquetout.ValidCompression(o.parquetZ); err != nil {
		return nil, usageError{fmt.Errorf("--parquet-compression: %w", err)}
	}
	if o.partID != "" {
		if err := parquetout.ValidPartID(o.partID); err != nil {
			return nil, usageError{fmt.Errorf("--part-id: %w", err)}
		}
	}
	// --threads: the goroutines that encode and compress row groups
	// beside the decoder (0: parquetout's default, 2; 1: none).
	w, err := parquetout.New(o.outPath, parquetout.Options{Decl: reg.Decl, MaxPartitions: o.maxParts, PartID: o.partID, Workers: o.threads, CreatedBy: createdBy(), Compression: o.parquetZ, Raw: o.q.hex})
	if err != nil {
		return nil, err
	}
	return w, nil
}

// capturedFrom is a sink in front of a Parquet lake that names each
// record's capture: the base name of the file being read when the record
// was completed ("-" for stdin). The name is set in order with the
// records, also when the lake writes beside the decoder.
type capturedFrom struct {
	sink
	set   func(name string)
	files *pipeline.Files
	last  int
}

// nameCaptures puts capturedFrom in front of out when records go to a
// Parquet lake (directly or behind a display filter).
func nameCaptures(out sink, files *pipeline.Files) sink {
	lake := lakeOf(out)
	if lake == nil {
		return out
	}
	set := lake.SetCapture
	if b := besideOf(out); b != nil {
		set = func(name string) { b.Do(func() { lake.SetCapture(name) }) }
	}
	return &capturedFrom{sink: out, set: set, files: files, last: -1}
}

func (c *capturedFrom) Record(r *dissect.Record) error {
	if name, i, _, _, ok := c.files.Current(); ok && i != c.last {
		c.last = i
		c.set(filepath.Base(name))
	}
	return c.sink.Record(r)
}

// Close closes the lake's files.
func (c *capturedFrom) Close() error { return closeOutput(c.sink) }

// StreamOpened passes on the streams opened, for the statistics that
// number them (-z follow,tcp,…,N) behind it.
func (c *capturedFrom) StreamOpened(id dissect.StreamID) {
	if o, ok := c.sink.(pipeline.StreamOpener); ok {
		o.StreamOpened(id)
	}
}

// writerOf returns the writer behind out: out without the display
// filter, the capture names and Beside in front of it.
func writerOf(out sink) dissect.Sink {
	if c, ok := out.(*capturedFrom); ok {
		out = c.sink
	}
	if q, ok := out.(*querySink); ok {
		out = q.out
	}
	if b, ok := out.(*pipeline.Beside); ok {
		return b.Sink()
	}
	return out
}

// besideOf returns the Beside in front of out's writer, or nil.
func besideOf(out sink) *pipeline.Beside {
	if q, ok := out.(*querySink); ok {
		out = q.out
	}
	b, _ := out.(*pipeline.Beside)
	return b
}

// lakeOf returns the Parquet lake out writes to, or nil.
func lakeOf(out sink) *parquetout.Writer {
	lake, _ := writerOf(out).(*parquetout.Writer)
	return lake
}

// outputNotes returns what the output has to say at the end of a run
// (after Close), for stderr: the records of a Parquet lake that went to
// an overflow partition and the partitions whose name was shortened.
// Nothing is lost in either case, but a query by partition does not see
// those records under their type.
func outputNotes(out sink) []string {
	lake := lakeOf(out)
	if lake == nil {
		return nil
	}
	var notes []string
	if n := lake.Overflowed(); n > 0 {
		notes = append(notes, fmt.Sprintf("-o parquet: %d records of types beyond the first %d named by the wire went to type=__overflow__ (their type in column record_type)",
			n, lake.MaxPartitions()))
	}
	if n := lake.Shortened(); n > 0 {
		notes = append(notes, fmt.Sprintf("-o parquet: %d partition names too long for a directory were shortened to a prefix and a hash (the full type in column record_type)", n))
	}
	return notes
}
