package main

import (
	"io"
	"os"
)

// streamingInput reports whether one of the captures named is a pipe or
// another input that is not a regular file: stdin ("-") when it is not
// a regular file, a named pipe, a process substitution (/dev/fd/N). Such
// an input streams (the pipeline writes out what it has decoded whenever
// the input pauses) and has no size, so the progress bar stays off in
// --progress auto.
func streamingInput(files []string, stdin io.Reader) bool {
	for _, name := range files {
		if name == "-" {
			f, ok := stdin.(*os.File)
			if !ok {
				return true
			}
			st, err := f.Stat()
			if err != nil || !st.Mode().IsRegular() {
				return true
			}
			continue
		}
		if st, err := os.Stat(name); err == nil && !st.Mode().IsRegular() {
			return true
		}
	}
	return false
}
