package foxws

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"testing"

	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/foxglove/mcap/go/mcap"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// mcapFile is what a test compares with: the MCAP file's messages in
// order, and its schemas by topic.
type mcapFile struct {
	topics, payloads []string
	times            []uint64
	stated           []string // each message's channel's metadata "envelope"
	schemas          map[string]*mcap.Schema
	advertised       map[string][]byte // the WebSocket's schema data by topic (sameSchema)
}

func readMCAP(t *testing.T, b []byte) mcapFile {
	t.Helper()
	rd, err := mcap.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.Messages(mcap.UsingIndex(false))
	if err != nil {
		t.Fatal(err)
	}
	f := mcapFile{schemas: map[string]*mcap.Schema{}, advertised: map[string][]byte{}}
	for {
		sc, ch, m, err := it.NextInto(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		f.topics = append(f.topics, ch.Topic)
		f.payloads = append(f.payloads, string(m.Data))
		f.times = append(f.times, m.LogTime)
		f.stated = append(f.stated, ch.Metadata["envelope"])
		f.schemas[ch.Topic] = sc
	}
	return f
}

// sameSchema checks a schema advertised on topic (a protobuf one in
// base64) against the file's: the same, but that a record message's
// channel in the file states src and dst (docs/mcap.md) where the
// WebSocket's messages hold them: its message has those two fields more.
func (f mcapFile) sameSchema(t *testing.T, topic, advertised, enc string) {
	t.Helper()
	sc := f.schemas[topic]
	if sc == nil {
		t.Errorf("%s: not in the MCAP file", topic)
		return
	}
	if enc != "protobuf" {
		if advertised != string(sc.Data) {
			t.Errorf("%s: schema differs from the MCAP file's:\n%s\n%s", topic, advertised, sc.Data)
		}
		return
	}
	data, err := base64.StdEncoding.DecodeString(advertised)
	if err != nil {
		t.Fatalf("%s: schema not base64: %v", topic, err)
	}
	f.advertised[topic] = data
	if bytes.Equal(data, sc.Data) {
		return
	}
	ws, file := fieldsOf(t, sc.Name, data), fieldsOf(t, sc.Name, sc.Data)
	if ws["src"] != "5 string" || ws["dst"] != "6 string" {
		t.Errorf("%s: the WebSocket's schema differs from the file's, without src and dst: %v", topic, ws)
	}
	delete(ws, "src")
	delete(ws, "dst")
	if !maps.Equal(ws, file) {
		t.Errorf("%s: schema fields %v, the MCAP file's %v", topic, ws, file)
	}
}

// samePayload checks message i sent on the WebSocket against the file's:
// the same bytes, or, for a record message whose channel in the file
// states src and dst, the same values once those are added to the file's.
func (f mcapFile) samePayload(t *testing.T, i int, payload string) {
	t.Helper()
	if payload == f.payloads[i] {
		return
	}
	sc := f.schemas[f.topics[i]]
	if sc.Encoding != "protobuf" || f.stated[i] == "" {
		t.Errorf("message %d: %q\nthe MCAP file's: %q", i, payload, f.payloads[i])
		return
	}
	var stated map[string]any
	if err := json.Unmarshal([]byte(f.stated[i]), &stated); err != nil {
		t.Fatal(err)
	}
	got := decodePB(t, sc.Name, f.advertised[f.topics[i]], payload)
	want := decodePB(t, sc.Name, sc.Data, f.payloads[i])
	for _, k := range []string{"src", "dst"} {
		if v, ok := stated[k]; ok {
			want[k] = v
		}
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if !bytes.Equal(g, w) {
		t.Errorf("message %d on %s: %s\nthe MCAP file's, with its channel's src and dst: %s", i, f.topics[i], g, w)
	}
}

// fieldsOf returns the number and kind of each field of message name,
// by name, from a FileDescriptorSet.
func fieldsOf(t *testing.T, name string, data []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	fs := mcapcheck.Descriptor(t, name, data).Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		out[string(fd.Name())] = fmt.Sprint(fd.Number(), " ", fd.Kind())
	}
	return out
}

// decodePB decodes a protobuf message of type name of a FileDescriptorSet
// as JSON values.
func decodePB(t *testing.T, name string, set []byte, payload string) map[string]any {
	t.Helper()
	m := dynamicpb.NewMessage(mcapcheck.Descriptor(t, name, set))
	if err := proto.Unmarshal([]byte(payload), m); err != nil {
		t.Fatal(err)
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
