// Package leakcheck lets a test check that no goroutine outlives the work
// it started.
package leakcheck

import (
	"runtime"
	"testing"
	"time"
)

// Settled fails t when, within two seconds, the number of goroutines does
// not fall back to before (counted with runtime.NumGoroutine before the
// work started); after says what ended ("Close", "the run").
func Settled(t testing.TB, before int, after string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after %s, %d before", n, after, before)
	}
}
