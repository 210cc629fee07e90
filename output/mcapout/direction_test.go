package mcapout

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/foxglove/mcap/go/mcap"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// TestChannelPerDirection: in a file, the records of a topic sent one
// way and the other are on two channels of that topic and schema, whose
// metadata states their src and dst; the messages hold neither, and the
// schema has no field for them. A WebSocket's Writer (NewEmitter), whose
// channels have no metadata, keeps one channel and both in the messages.
func TestChannelPerDirection(t *testing.T) {
	there := rec("p", "plain", 0, f("n", dissect.Uint(7)))
	back := rec("p", "plain", 0, f("n", dissect.Uint(8)))
	back.Src, back.Dst = "b:2", "a:1"
	recs := []*dissect.Record{there, back, there}

	msgs, schemas, _ := write(t, Options{Decl: registry(t).Decl}, recs...)
	var stated []string
	seen := map[string]int{}
	for _, m := range msgs {
		if m.topic != "/p/0/plain" {
			continue
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(m.meta["envelope"]), &env); err != nil {
			t.Fatalf("metadata %v: %v", m.meta, err)
		}
		src, _ := env["src"].(string)
		dst, _ := env["dst"].(string)
		key := src + ">" + dst
		if seen[key] == 0 {
			stated = append(stated, key)
		}
		seen[key]++
		if strings.Contains(m.data, "a:1") || strings.Contains(m.data, "b:2") {
			t.Errorf("message on %s holds an address: %q", key, m.data)
		}
		if m.schema != "dissect.p.plain" {
			t.Errorf("schema %s", m.schema)
		}
	}
	if strings.Join(stated, ",") != "a:1>b:2,b:2>a:1" || seen["a:1>b:2"] != 2 || seen["b:2>a:1"] != 1 {
		t.Errorf("channels stating %v, messages %v; want a:1>b:2 (2) then b:2>a:1 (1)", stated, seen)
	}
	fileMsg := mcapcheck.Descriptor(t, "dissect.p.plain", []byte(schemas["dissect.p.plain"]))
	for _, name := range []string{"src", "dst"} {
		if fileMsg.Fields().ByName(protoreflect.Name(name)) != nil {
			t.Errorf("the file's schema has a field %s", name)
		}
	}

	e := &emitted{}
	w := NewEmitter(e, Options{Decl: registry(t).Decl})
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	var ch *mcap.Channel
	for _, c := range e.channels {
		if c.Topic == "/p/0/plain" {
			if ch != nil {
				t.Fatalf("two WebSocket channels on %s", c.Topic)
			}
			ch = c
		}
	}
	if ch == nil || len(ch.Metadata["envelope"]) == 0 || strings.Contains(ch.Metadata["envelope"], "src") {
		t.Fatalf("WebSocket channel %+v", ch)
	}
	sch := e.schemas[ch.SchemaID]
	md := mcapcheck.Descriptor(t, sch.Name, sch.Data)
	src, dst := md.Fields().ByName("src"), md.Fields().ByName("dst")
	if src == nil || dst == nil {
		t.Fatal("the WebSocket's schema has no src or dst")
	}
	var got []string
	for _, m := range e.messages {
		if m.ch != ch.ID {
			continue
		}
		msg := dynamicpb.NewMessage(md)
		if err := proto.Unmarshal(m.data, msg); err != nil {
			t.Fatal(err)
		}
		got = append(got, msg.Get(src).String()+">"+msg.Get(dst).String())
	}
	if strings.Join(got, ",") != "a:1>b:2,b:2>a:1,a:1>b:2" {
		t.Errorf("WebSocket messages from %v", got)
	}
}

// emitted is an Emitter that keeps what it is given.
type emitted struct {
	schemas  map[uint16]*mcap.Schema
	channels []*mcap.Channel
	messages []emittedMsg
	cur      emittedMsg
}

type emittedMsg struct {
	ch   uint16
	data []byte
}

func (e *emitted) Schema(s *mcap.Schema) {
	if e.schemas == nil {
		e.schemas = map[uint16]*mcap.Schema{}
	}
	e.schemas[s.ID] = s
}
func (e *emitted) Channel(c *mcap.Channel) { e.channels = append(e.channels, c) }
func (e *emitted) Begin(ch uint16, _ uint32, _ uint64) []byte {
	e.cur = emittedMsg{ch: ch}
	return nil
}
func (e *emitted) End(b []byte) {
	e.cur.data = b
	e.messages = append(e.messages, e.cur)
}
