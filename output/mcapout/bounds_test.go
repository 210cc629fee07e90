package mcapout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect"
)

// TestWireNamesBounded writes records whose types and senders the wire
// names: poses of many long senders (one pose topic), many types that
// share a topic (alike in their first 64 bytes), and long ones (a topic
// each, most going to /p/_overflow), with room for 16 topics. The
// writer keeps at most 4 × 16 keys, 16 topics (and /tf, /dissect/events),
// 16 frames and no name longer than maxKept, while every record is its
// message whole and every pose's frame has a transform from world.
func TestWireNamesBounded(t *testing.T) {
	const maxTopics = 16
	var recs []*dissect.Record
	for i := range 100 {
		recs = append(recs, rec("p", "tracker", 2, f("sender", dissect.Str(strings.Repeat("s", 200)+fmt.Sprint(i))),
			f("sensor", dissect.Int(1)), f("pos", floats(1, 2, 3)), f("quat", quat(0, 0, 0, 1))))
	}
	for i := range 500 {
		recs = append(recs,
			rec("p", strings.Repeat("x", 64)+fmt.Sprint(i), 0, f("data", dissect.Bytes([]byte{1}))),
			rec("p", fmt.Sprint(i)+strings.Repeat("é", 500), 1, f("data", dissect.Bytes([]byte{2}))))
	}
	var file bytes.Buffer
	w, err := New(&file, Options{MaxTopics: maxTopics, Decl: registry(t).Decl, Encoding: EncodingJSON, PoseInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
		if len(w.topics) > 4*maxTopics || len(w.byTopic) > maxTopics+2 || len(w.frames) > maxTopics {
			t.Fatalf("after record %d: %d keys, %d topics, %d frames", i, len(w.topics), len(w.byTopic), len(w.frames))
		}
	}
	for k := range w.topics {
		if len(k.typ) > maxKept || len(k.sender) > maxKept {
			t.Errorf("a key keeps %d, %d bytes", len(k.typ), len(k.sender))
		}
	}
	for fr := range w.frames {
		if len(fr) > maxKept {
			t.Errorf("a frame of %d bytes", len(fr))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	msgs, _ := readBack(t, file.Bytes())
	rooted := map[string]bool{}
	n := 0
	for _, m := range msgs {
		switch {
		case m.topic == "/tf":
			var tf struct {
				Transforms []struct {
					Parent string `json:"parent_frame_id"`
					Child  string `json:"child_frame_id"`
				} `json:"transforms"`
			}
			if err := json.Unmarshal([]byte(m.data), &tf); err != nil {
				t.Fatal(err)
			}
			for _, x := range tf.Transforms {
				if x.Parent == "world" {
					rooted[x.Child] = true
				}
			}
		case strings.HasPrefix(m.topic, "/pose/"):
			var p struct {
				Frame string `json:"frame_id"`
			}
			if err := json.Unmarshal([]byte(m.data), &p); err != nil {
				t.Fatal(err)
			}
			rooted[p.Frame] = rooted[p.Frame] // known, rooted or not
		case m.topic == "/dissect/events":
		default:
			if n < len(recs) && m.data != jsonOf(recs[n]) {
				t.Errorf("message %d on %s is not record %d", n, m.topic, n)
			}
			n++
		}
	}
	if n != len(recs) {
		t.Errorf("%d record messages, %d records", n, len(recs))
	}
	frames := 0
	for fr, ok := range rooted {
		if strings.HasPrefix(fr, "sss") {
			frames++
			if !ok {
				t.Errorf("frame %.20q… has no transform from world", fr)
			}
		}
	}
	if frames != 100 {
		t.Errorf("%d frames of senders, want 100 (one per sender)", frames)
	}
}
