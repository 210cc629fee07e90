package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// stopSignals are the signals that stop a file run cleanly: reading
// stops, every output is completed, the summary is written, and the exit
// status is 128 + the signal's number (130, 143, 129).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// signalName is the conventional name of a stop signal.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// signalStatus is the exit status of a run stopped by s: 128 + its number,
// as a shell reports a program killed by it.
func signalStatus(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return 128 + int(n)
	}
	return exitError
}

// catchStops returns a context cancelled by the first SIGINT, SIGTERM or
// SIGHUP, and caught, which returns that signal (nil: none came). A second
// one ends the process at once through exit, after one line on stderr:
// the outputs are then not completed, as the first stop was not enough
// (a reader of the output that stopped reading). stop ends the watch.
func catchStops(parent context.Context, stderr io.Writer, exit func(int)) (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	var first atomic.Pointer[os.Signal]
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, stopSignals...)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case s := <-sigs:
				if first.CompareAndSwap(nil, &s) {
					cancel()
					continue
				}
				fmt.Fprintf(stderr, "dissect: stopped at once (a second %s): the outputs are not complete, no summary\n", signalName(s))
				exit(signalStatus(*first.Load()))
				return
			case <-done:
				return
			}
		}
	}()
	caught = func() os.Signal {
		if p := first.Load(); p != nil {
			return *p
		}
		return nil
	}
	return ctx, caught, func() {
		signal.Stop(sigs)
		close(done)
		<-finished
		cancel()
	}
}

// exitStatus is an error that asks run for this exit status; what there
// was to say was already written.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }
