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
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}
