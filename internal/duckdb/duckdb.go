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
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/internal/nodetest"
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
	return nodetest.Find("internal/duckdb", "the DuckDB tests run DuckDB through Node (@duckdb/node-api)", "@duckdb/node-api")
}
