// Package nodetest finds what the test helpers that run a Node script
// (internal/duckdb, internal/mcapcheck, internal/schemacheck) need: node
// on PATH, and the npm packages `npm ci --prefix DIR` installs in the
// helper's own directory (.ci/run does). Where either is missing, the
// helpers skip their test with the error [Find] returns, which says what
// to run.
package nodetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// Find returns the path of node and the directory of the helper package
// pkg (its path from the module root, e.g. "internal/duckdb": where its
// scripts and node_modules are), once each npm package of deps is
// installed there. Otherwise its error says what is missing and what to
// run; what says what Node runs, for when node itself is missing.
func Find(pkg, what string, deps ...string) (node, dir string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", fmt.Errorf("node is not installed: %s; install Node, then run: npm ci --prefix %s", what, pkg)
	}
	root, err := moduleRoot()
	if err != nil {
		return "", "", err
	}
	dir = filepath.Join(root, filepath.FromSlash(pkg))
	for _, d := range deps {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(d), "package.json")); err != nil {
			return "", "", fmt.Errorf("%s is not installed in %s; run: npm ci --prefix %s", d, dir, pkg)
		}
	}
	return node, dir, nil
}

// moduleRoot returns the module's root directory: two levels above this
// package's directory where this file was compiled from, or else (a build
// that keeps no absolute source paths) the first directory with a go.mod
// above the working directory, which go test sets to the package's own.
func moduleRoot() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			return root, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: cannot find the module root", wd)
		}
	}
}
