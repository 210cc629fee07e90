package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// suggestCommand catches a mistyped command: when the first argument of
// 'dissect ARG...' is no file but is close to a command's name (cobra's
// suggestions: a prefix of it, or at most 2 edits away), it says so on
// one line ("dissect: "protocol" is neither a file nor a command; did
// you mean "protocols"?") and returns exit status 2, instead of the
// error of opening a file that does not exist. An argument that looks
// like a path (a '/' or a '.') is left to the file error.
func suggestCommand(cmd *cobra.Command, args []string, stderr io.Writer) error {
	if len(args) == 0 {
		return nil
	}
	arg := args[0]
	if arg == "" || arg == "-" || strings.ContainsAny(arg, "/.\\") {
		return nil
	}
	if _, err := os.Lstat(arg); !errors.Is(err, fs.ErrNotExist) {
		return nil // a file (or one that cannot be looked at: its own error follows)
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default for unknown commands
	}
	s := cmd.SuggestionsFor(arg)
	if len(s) == 0 {
		return nil
	}
	best := s[0]
	for _, c := range s[1:] {
		if editDistance(strings.ToLower(arg), c) < editDistance(strings.ToLower(arg), best) {
			best = c
		}
	}
	fmt.Fprintf(stderr, "dissect: %q is neither a file nor a command; did you mean %q?\n", oneLine(arg), best)
	return exitStatus{exitUsage}
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
