package main

import (
	"encoding/json"
	"os"
	"testing"
)

// helperEnv tells the test binary to act as the dissect command (see
// TestHelperProcess), with these arguments (JSON): tests that need a real
// process (a pty as its terminal, signals) start os.Args[0] with
// -test.run=^TestHelperProcess$ and this variable set.
const helperEnv = "DISSECT_TEST_ARGS"

// TestHelperProcess is the dissect command when run by such a test;
// otherwise it does nothing.
func TestHelperProcess(t *testing.T) {
	js := os.Getenv(helperEnv)
	if js == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(js), &args); err != nil {
		os.Exit(99)
	}
	code := run(args, os.Stdin, os.Stdout, os.Stderr)
	if path := os.Getenv(helperPeakEnv); path != "" {
		// The peak of this process since its exec (rusage's maxrss of a
		// child counts its parent's, which it was forked from).
		status, _ := os.ReadFile("/proc/self/status")
		if err := os.WriteFile(path, status, 0o600); err != nil {
			os.Exit(99)
		}
	}
	os.Exit(code)
}

// helperPeakEnv names a file where TestHelperProcess writes
// /proc/self/status (VmHWM: its peak resident size) after the run.
const helperPeakEnv = "DISSECT_TEST_STATUS_FILE"
