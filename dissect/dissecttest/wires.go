package dissecttest

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
)

// Wire is one message of a truth file (a sidecar written by an encoder
// apart from the decoder): its record type and its bytes.
type Wire struct {
	Type  string
	Bytes []byte
}

// CleanWires returns the messages of the truth file at path that the
// encoder marked as carrying no warning ("warning": "no"), in file
// order: well-formed messages, for checking a description's decoder and
// encoder against each other.
func CleanWires(t testing.TB, path string) []Wire {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Streams []struct {
			Directions []struct {
				Records []struct {
					Type    string `json:"type"`
					Warning string `json:"warning"`
					Wire    string `json:"wire"`
				} `json:"records"`
			} `json:"directions"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(data, &truth); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []Wire
	for _, s := range truth.Streams {
		for _, d := range s.Directions {
			for _, r := range d.Records {
				if r.Warning != "no" || r.Wire == "" {
					continue
				}
				b, err := hex.DecodeString(r.Wire)
				if err != nil {
					t.Fatalf("%s: wire %q: %v", path, r.Wire, err)
				}
				out = append(out, Wire{Type: r.Type, Bytes: b})
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no message without a warning", path)
	}
	return out
}
