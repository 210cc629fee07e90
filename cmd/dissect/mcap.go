package main

import (
	"errors"
	"io"
)

// mcapOutput returns the -o mcap writer (to --out, or stdout).
func (o *readOpts) mcapOutput(stdout io.Writer) (sink, error) {
	return nil, usageError{errors.New("-o mcap: not built yet")}
}
