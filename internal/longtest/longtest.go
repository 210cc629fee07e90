// Package longtest marks the tests too long for a contributor's 'go test
// ./...' (exhaustive sweeps, fresh clones and builds, every capture through
// tshark, the documents' commands): they run when DISSECT_LONG=1, as
// .ci/run sets it, so CI runs everything while the README's test command
// stays within a few minutes on two cores.
package longtest

import (
	"os"
	"testing"
)

// Env is the variable that runs the long tests.
const Env = "DISSECT_LONG"

// On reports whether the long tests run.
func On() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless the long tests run, saying how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if !On() {
		t.Skip("a long test: " + Env + "=1 runs it (.ci/run does)")
	}
}
