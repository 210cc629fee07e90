//go:build race

package main

// raceDetector is whether the tests run under the race detector: long
// tests (DISSECT_LONG) then keep their default size.
const raceDetector = true
