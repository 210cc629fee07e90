package leakcheck

import (
	"runtime"
	"testing"
)

// failTB records a failure instead of stopping the test.
type failTB struct {
	testing.TB
	failed bool
}

func (f *failTB) Helper()               {}
func (f *failTB) Fatalf(string, ...any) { f.failed = true }

// A goroutine still running two seconds on fails the check; once it has
// ended, the check passes.
func TestSettled(t *testing.T) {
	before := runtime.NumGoroutine()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { <-stop; close(done) }()
	f := &failTB{TB: t}
	Settled(f, before, "the work")
	if !f.failed {
		t.Fatal("a goroutine left running was not reported")
	}
	close(stop)
	<-done
	Settled(t, before, "the work")
}
