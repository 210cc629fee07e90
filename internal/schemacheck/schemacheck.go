// Package schemacheck checks dissect's JSON Lines records against the
// lines of `dissect protocols --schema` for tests, with a standard JSON
// Schema validator: Ajv (draft 2020-12, strict mode), through Node
// (validate.mjs in this directory). `npm ci --prefix internal/schemacheck`
// installs the pinned package (.ci/run does); without node or it,
// [Check] skips the test and says what to run.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/internal/nodetest"
)

// Result is what validate.mjs reports.
type Result struct {
	Schemas      int            `json:"schemas"`
	Records      int            `json:"records"`
	PerType      map[string]int `json:"per_type"` // "proto type": records validated
	ProblemCount int            `json:"problem_count"`
	Problems     []struct {
		File   string `json:"file"`
		Line   int    `json:"line"`
		Proto  string `json:"proto"`
		Type   string `json:"type"`
		Error  string `json:"error"`
		Record string `json:"record"`
	} `json:"problems"` // the first 50
}

// Check validates the records in the JSON Lines files against the schema
// lines in schema; it skips the test when Node or Ajv is missing.
func Check(t testing.TB, schema string, records ...string) *Result {
	t.Helper()
	node, dir, err := nodetest.Find("internal/schemacheck", "the schema validator is Ajv on Node", "ajv")
	if err != nil {
		t.Skip(err.Error())
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "validate.mjs"), schema}, records...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("validate.mjs: %v: %s", err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("validate.mjs: output %q: %v", stdout.String(), err)
	}
	return &res
}
