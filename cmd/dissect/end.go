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
// Every run that read something ends with its summary, whatever became
// of the output: it says what was read and lost. A live run (sum.Capture
// is set) returns its first error. A file run returns its errors: the
// files that could not be read, then the output's (a full disk: one line
// naming the path, exit 1). One that read nothing because of an input
// error (a missing file, not a capture) ends with that error alone: an
// empty summary would only push the error away. The reader of the
// output going away (EPIPE: dissect big.pcap | head) is a normal end, as
// in tshark: exit 0. A file run stopped by a signal (o.interrupted) says
// so after the summary, reports its errors, and asks for exit status
// 128 + the signal's number.
func (o *readOpts) endRun(stderr io.Writer, out sink, sum *dissect.Summary, err error) (rerr error) {
	defer func() { rerr = o.closeOut(rerr) }() // --out FILE, after the statistics (outfile.go)
	if errors.Is(err, pipeline.ErrAborted) {
		return reportAborted(stderr, sum.Capture)
	}
	live := sum.Capture != nil
	if cerr := closeOutput(out); cerr != nil && err == nil {
		err = &pipeline.OutputError{Err: cerr}
	}
	for _, n := range append(outputNotes(out), foxgloveNotes(out)...) { // records moved, not lost (parquet.go); what Foxglove clients missed (foxglove.go)
		fmt.Fprintf(stderr, "dissect: %s\n", n)
	}
	closed := errors.Is(err, syscall.EPIPE)
	var oe *pipeline.OutputError
	outFailed := !closed && errors.As(err, &oe)
	nothingRead := !live && err != nil && !outFailed && sum.Packets == 0
	if !closed && !nothingRead {
		ferr := o.finish(stderr)
		switch {
		case ferr == nil:
		case errors.Is(ferr, syscall.EPIPE):
			closed = closed || !live
		case err == nil: // the summary follows all the same
			err = ferr
		}
	}
	if !o.noSummary && !nothingRead {
		tt := terminalOf(stderr, os.Getenv)
		output.WriteSummaryWith(stderr, sum, output.SummaryOptions{ASCII: !tt.utf8, Width: tt.width})
	}
	switch {
	case o.interrupted != nil && !live:
		fmt.Fprintf(stderr, "dissect: interrupted by %s: stopped reading after %d packets\n", signalName(o.interrupted), sum.Packets)
		if !closed && err != nil {
			for _, e := range fileErrors(err) {
				fmt.Fprintf(stderr, "dissect: %s\n", oneLine(e.Error()))
			}
		}
		return exitStatus{signalStatus(o.interrupted)}
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
	errs := fileErrors(err)
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

// fileErrors returns the errors err joins (pipeline.Files joins them), or
// err alone.
func fileErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	} else if err != nil {
		return []error{err}
	}
	return nil
}
