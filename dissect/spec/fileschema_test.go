package spec

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

var update = flag.Bool("update", false, "write docs/protocol-file.schema.json from FileSchema")

const schemaFile = "../../docs/protocol-file.schema.json"

// TestFileSchema: the published JSON Schema is FileSchema's (made from
// the loader's key lists); regenerate it with
// go test ./dissect/spec -run TestFileSchema -update.
func TestFileSchema(t *testing.T) {
	got := FileSchema()
	if *update {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not FileSchema's: run go test ./dissect/spec -run TestFileSchema -update", schemaFile)
	}
}

// TestFileKeysDocumented: docs/protocol-file.md names every key the
// loader accepts, as `key`.
func TestFileKeysDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol-file.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, keys := range [][]string{topKeys, metaKeys, frameKeys, lengthKeys, checkKeys, crcKeys, bodyKeys, messagesKeys, typeKeys, fieldKeys, switchKeys, validKeys} {
		for _, k := range keys {
			if !strings.Contains(doc, "`"+k+"`") {
				t.Errorf("docs/protocol-file.md does not name the key `%s`", k)
			}
		}
	}
}

// TestFileSchemaAcceptsExample checks with Ajv (internal/schemacheck's)
// that the example file validates against the published schema and that
// a misspelt key does not.
func TestFileSchemaAcceptsExample(t *testing.T) {
	node, err := exec.LookPath("node")
	mods, _ := filepath.Abs("../../internal/schemacheck/node_modules")
	if _, serr := os.Stat(filepath.Join(mods, "ajv")); err != nil || serr != nil {
		t.Skip("node or Ajv missing: run npm ci --prefix internal/schemacheck")
	}
	b, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v = jsonable(v)
	good, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	v.(map[string]any)["frame"].(map[string]any)["lenght"] = 3
	bad, _ := json.Marshal(v)
	script := `const Ajv = require("ajv/dist/2020"); const fs = require("fs");
const v = new Ajv({strict: false}).compile(JSON.parse(fs.readFileSync(process.argv[1])));
console.log(v(JSON.parse(process.argv[2])), v(JSON.parse(process.argv[3])));`
	cmd := exec.Command(node, "-e", script, schemaFile, string(good), string(bad))
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "true false" {
		t.Errorf("Ajv: %v: %s (want the example valid, the misspelt key not)", err, out)
	}
}

// jsonable turns YAML's maps with number keys (cases, enums) into the
// string-keyed objects JSON has.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = jsonable(x[i])
		}
	}
	return v
}
