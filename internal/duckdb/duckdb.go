// Package duckdb runs SQL in a real DuckDB for tests, through Node and the
// official client @duckdb/node-api (query.mjs in this directory), so that the
// tests need no cgo and no DuckDB build: `npm ci --prefix internal/duckdb`
// installs the pinned client with its prebuilt binaries (.ci/run does).
// Where node or the package is missing, [Query] skips the test and says
// what to run.
//
// Each call starts a fresh in-memory database. Files are read with DuckDB's
// own readers (read_json, read_json_auto, read_parquet, read_csv), so tests
// write their data to a temporary file and name its absolute path in the
// SQL; quote paths with [Quote].
package duckdb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Column is a result column: its name and DuckDB's type name, e.g. DOUBLE,
// BIGINT, HUGEINT, VARCHAR, DOUBLE[], STRUCT(x DOUBLE, y DOUBLE).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Query runs sql (one or more statements; the last one's result is
// returned) and returns the result columns and rows. Values are decoded
// from the client's JSON forms with json.Number for numbers: DOUBLE and the
// integer types up to INTEGER as numbers, BIGINT, HUGEINT, UBIGINT and
// DECIMAL as exact strings, NaN and infinities as the strings "NaN",
// "Infinity", "-Infinity", lists as []any, structs as map[string]any. A
// negative zero arrives as 0: test signs in SQL (signbit). A SQL error fails
// the test. Without node or the installed package, Query calls t.Skip.
func Query(t testing.TB, sql string) ([]Column, [][]any) {
	t.Helper()
	cols, rows, err := run(t, sql)
	if err != nil {
		t.Fatalf("duckdb: %v\nSQL: %s", err, sql)
	}
	return cols, rows
}

// Available reports why DuckDB cannot run here (nil when it can): node is
// not on PATH, or the package is not installed.
func Available() error {
	_, _, err := setup()
	return err
}

// Quote returns s as a SQL string literal ('...', quotes doubled).
func Quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func run(t testing.TB, sql string) ([]Column, [][]any, error) {
	node, dir, err := setup()
	if err != nil {
		t.Skip(err.Error())
	}
	cmd := exec.Command(node, filepath.Join(dir, "query.mjs"))
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(sql)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res struct {
		Columns []Column `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&res); err != nil {
		return nil, nil, fmt.Errorf("reading query.mjs output: %v (stderr: %s)", err, stderr.String())
	}
	return res.Columns, res.Rows, nil
}

// setup finds node and this directory with its installed node_modules.
func setup() (node, dir string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", errors.New("node is not installed: the DuckDB tests run DuckDB through Node (@duckdb/node-api); install Node, then run: npm ci --prefix internal/duckdb")
	}
	dir, err = packageDir()
	if err != nil {
		return "", "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		return "", "", fmt.Errorf("@duckdb/node-api is not installed in %s; run: npm ci --prefix internal/duckdb", dir)
	}
	return node, dir, nil
}

// packageDir returns the directory of this package's source (query.mjs and
// node_modules): where this file was compiled from, or else internal/duckdb
// under the module root above the working directory (go test runs in the
// package's own directory).
func packageDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		d := filepath.Dir(file)
		if _, err := os.Stat(filepath.Join(d, "query.mjs")); err == nil {
			return d, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "internal", "duckdb")
			if _, err := os.Stat(filepath.Join(p, "query.mjs")); err == nil {
				return p, nil
			}
			return "", fmt.Errorf("no internal/duckdb/query.mjs under the module root %s", d)
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s: cannot find internal/duckdb", wd)
		}
	}
}
