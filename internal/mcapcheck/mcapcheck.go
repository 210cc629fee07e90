// Package mcapcheck reads an MCAP file for tests with an independent
// reader: Foxglove's TypeScript library @mcap/core, through Node
// (check.mjs in this directory), with Ajv checking every JSON Schema and
// JSON message, and protobufjs (through @mcap/support) decoding every
// protobuf message from its channel's FileDescriptorSet. `npm ci --prefix internal/mcapcheck` installs the pinned
// packages (.ci/run does); without node or them, [Check] skips the test
// and says what to run.
package mcapcheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dissect-tools/dissect/internal/nodetest"
)

// Result is what check.mjs reports about a file.
type Result struct {
	Header struct {
		Profile string `json:"profile"`
		Library string `json:"library"`
	} `json:"header"`
	StatisticsMessages string   `json:"statistics_messages"` // decimal, from the summary
	Chunks             int      `json:"chunks"`
	Compression        []string `json:"compression"` // of the chunks
	MessagesRead       int      `json:"messages_read"`
	Schemas            []struct {
		ID       int    `json:"id"`
		Name     string `json:"name"`
		Encoding string `json:"encoding"`
	} `json:"schemas"`
	Channels []struct {
		ID       int               `json:"id"`
		Topic    string            `json:"topic"`
		Schema   string            `json:"schema"`
		Encoding string            `json:"encoding"`
		Metadata map[string]string `json:"metadata"`
		Count    int               `json:"count"`
	} `json:"channels"`
	// Problems: schemas that are not valid JSON Schema or not in Foxglove's
	// subset, messages that are not JSON or not valid against their schema.
	Problems []map[string]any `json:"problems"`
	Messages []Message        `json:"messages"`
	// Records compares, for CheckRecords, the records read with those of
	// -o json.
	Records *struct {
		MCAP   int `json:"mcap"` // messages of dissect.* schemas
		JSON   int `json:"json"` // lines
		Differ []struct {
			MCAP *string `json:"mcap"`
			JSON *string `json:"json"`
		} `json:"differ"` // the first (at most 3), each as sorted JSON
	} `json:"records"`
}

// Message is one message as read, in the file's log-time order.
type Message struct {
	Topic   string          `json:"topic"`
	Schema  string          `json:"schema"`
	Seq     uint32          `json:"seq"`
	LogTime string          `json:"log_time"` // decimal nanoseconds
	Data    json.RawMessage `json:"data"`     // as JSON.stringify wrote it back
	// Bits are, for a foxglove.PoseInFrame, the float64 bits (hex) of
	// position x, y, z and orientation x, y, z, w as JavaScript parsed them.
	Bits []string `json:"bits"`
}

// Check reads file with check.mjs; it skips the test when Node or the
// packages are missing.
func Check(t testing.TB, file string) *Result {
	t.Helper()
	return run(t, file)
}

// CheckRecords reads file as Check does and compares its records, as
// JavaScript parses them, with the lines of jsonl, the same run's -o json
// (Result.Records).
func CheckRecords(t testing.TB, file, jsonl string) *Result {
	t.Helper()
	lines := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(lines, []byte(jsonl), 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, file, "--records", lines)
	if res.Records == nil {
		t.Fatal("check.mjs compared no records")
	}
	return res
}

func run(t testing.TB, file string, args ...string) *Result {
	t.Helper()
	node, dir, err := setup()
	if err != nil {
		t.Skip(err.Error())
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "check.mjs"), file}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("check.mjs %s: %v: %s", file, err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("check.mjs %s: output: %v", file, err)
	}
	return &res
}

// Available reports why the checker cannot run here (nil when it can).
func Available() error {
	_, _, err := setup()
	return err
}

// setup finds node and this directory with its installed packages.
func setup() (node, dir string, err error) {
	return nodetest.Find("internal/mcapcheck", "the independent MCAP reader is Foxglove's @mcap/core on Node", "@mcap/core", "@mcap/support", "protobufjs", "lossless-json", "ajv", "fzstd", "@foxglove/wasm-lz4")
}
