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
// was completed ("-" for stdin).
type capturedFrom struct {
	sink
	lake  *parquetout.Writer
	files *pipeline.Files
	last  int
}

// nameCaptures puts capturedFrom in front of out when records go to a
// Parquet lake (directly or behind a display filter).
func nameCaptures(out sink, files *pipeline.Files) sink {
	lake, ok := out.(*parquetout.Writer)
	if q, isQuery := out.(*querySink); isQuery {
		lake, ok = q.out.(*parquetout.Writer)
	}
	if !ok {
		return out
	}
	return &capturedFrom{sink: out, lake: lake, files: files, last: -1}
}

func (c *capturedFrom) Record(r *dissect.Record) error {
	if name, i, _, _, ok := c.files.Current(); ok && i != c.last {
		c.last = i
		c.lake.SetCapture(filepath.Base(name))
	}
	return c.sink.Record(r)
}

// Close closes the lake's files.
func (c *capturedFrom) Close() error { return closeOutput(c.sink) }

// outputNotes returns what the output has to say at the end of a run
// (after Close), for stderr: the records of a Parquet lake that went to
// an overflow partition and the partitions whose name was shortened.
// Nothing is lost in either case, but a query by partition does not see
// those records under their type.
func outputNotes(out sink) []string {
	var lake *parquetout.Writer
	switch o := out.(type) {
	case *capturedFrom:
		lake = o.lake
	case *parquetout.Writer:
		lake = o
	case *querySink:
		lake, _ = o.out.(*parquetout.Writer)
	}
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
