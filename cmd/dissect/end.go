package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/dissect-tools/dissect/pipeline"
)

// endRun writes what follows the records of a run, once pipeline.Run has
// returned sum and err: it closes the output, writes the statistics and
// the display filter's count (finish) and the summary, and returns the
// run's error, for the exit code. Files, live interfaces and serial taps
// all end here.
//
// A live run (sum.Capture is set) always ends with its statistics and
// summary, which say what was captured and what -w holds whatever became
// of the output; it returns its first error. A file run whose output
// failed ends with that error alone, and so does one that read nothing
// (a missing file, not a capture): an empty summary would only push the
// error away. The reader of the output going away (EPIPE: dissect big.pcap
// | head) is a normal end, as in tshark: the summary still goes to stderr,
// and the exit code is 0.
func (o *readOpts) endRun(stderr io.Writer, out sink, sum *dissect.Summary, err error) error {
	if errors.Is(err, pipeline.ErrAborted) {
		return reportAborted(stderr, sum.Capture)
	}
	live := sum.Capture != nil
	if cerr := closeOutput(out); cerr != nil && err == nil {
		err = &pipeline.OutputError{Err: cerr}
	}
	closed := errors.Is(err, syscall.EPIPE)
	var oe *pipeline.OutputError
	if !live && !closed && errors.As(err, &oe) {
		return err
	}
	nothingRead := !live && err != nil && sum.Packets == 0
	if !closed && !nothingRead {
		ferr := o.finish(stderr)
		gone := errors.Is(ferr, syscall.EPIPE)
		switch {
		case ferr == nil:
		case live: // the summary follows all the same
			if !gone && err == nil {
				err = ferr
			}
		case gone:
			closed = true
		default:
			return ferr
		}
	}
	if !o.noSummary && !nothingRead {
		output.WriteSummaryWith(stderr, sum, output.SummaryOptions{ASCII: !terminalOf(stderr, os.Getenv).utf8})
	}
	switch {
	case closed:
		return nil
	case live:
		// One error, even one that unwraps to several (a serial
		// PortError: its kind and its cause).
		return err
	}
	return joinFileErrors(stderr, err)
}

// reportAborted says how far an aborted live run got (a second Ctrl-C).
// The decoder may still be writing to the output: closing it would race,
// so the process ends at once instead, with exit code 1.
func reportAborted(stderr io.Writer, c *dissect.CaptureCounts) error {
	fmt.Fprintf(stderr, "dissect: stopped at once: %d packets captured", c.Captured)
	if c.WritePath != "" {
		fmt.Fprintf(stderr, ", %d written to %s", c.Written, c.WritePath)
	}
	fmt.Fprintln(stderr, "; records still queued for output were not written")
	return silentError{}
}

// closeOutput ends an output that writes a footer or closes files (MCAP,
// Parquet) once the run is over.
func closeOutput(out sink) error {
	if c, ok := out.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// joinFileErrors reports every file error (pipeline.Files joins them) on
// its own line and returns a silent error for the exit code; a single
// error is returned as it is.
func joinFileErrors(stderr io.Writer, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else if err != nil {
		errs = []error{err}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	for _, err := range errs {
		fmt.Fprintf(stderr, "dissect: %s\n", oneLine(err.Error()))
	}
	return silentError{}
}
