package mcapout

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dissect-tools/dissect/dissect"
)

// derived draws r's pictures, as its declaration's roles say: a pose
// (Pose) and a line strip (Polyline).
func (w *Writer) derived(r *dissect.Record, d *declared, k topicKey, m *memo) error {
	t := d.decl
	if t.Pose == nil && t.Polyline == "" {
		return nil
	}
	w.slab = w.slab[:0]
	if t.Pose != nil {
		if err := w.pose(r, t, k, m); err != nil {
			return err
		}
	}
	if t.Polyline != "" {
		return w.polyline(r, t, k)
	}
	return nil
}

// num formats v as the JSON of records writes it, if it is a finite
// number, and sets *f to its float64 value (a float32's exactly).
func (w *Writer) num(v dissect.Value, ok bool, f *float64) ([]byte, bool) {
	switch v.Kind() {
	case dissect.KindFloat, dissect.KindFloat32, dissect.KindInt, dissect.KindUint:
	default:
		return nil, false
	}
	if *f = v.Float(); !ok || math.IsNaN(*f) || math.IsInf(*f, 0) {
		return nil, false
	}
	if w.pbDerived() {
		return nil, true // protobuf uses the float64
	}
	start := len(w.slab)
	w.slab = w.enc.AppendValue(w.slab, &v)
	return w.slab[start:len(w.slab):len(w.slab)], true
}

// xyz reads three numbers: the items of an array, or the keys x, y, z of
// an object (the first field of each name, as Value.Get finds it); with
// q, four (an array's fourth item, an object's w).
func (w *Writer) xyz(v dissect.Value, q bool) (vec, bool) {
	var out vec
	n := 3
	if q {
		n = 4
	}
	switch v.Kind() {
	case dissect.KindArray:
		it := v.Items()
		if len(it) != n {
			return out, false
		}
		for i := range n {
			var ok bool
			if out.s[i], ok = w.num(it[i].Value, true, &out.f[i]); !ok {
				return out, false
			}
		}
		return out, true
	case dissect.KindObject:
		var seen [4]bool
		found := 0
		for _, it := range v.Items() {
			i := 0
			switch it.Key {
			case "x":
			case "y":
				i = 1
			case "z":
				i = 2
			case "w":
				i = 3
			default:
				continue
			}
			if i >= n || seen[i] {
				continue
			}
			var ok bool
			if out.s[i], ok = w.num(it.Value, true, &out.f[i]); !ok {
				return out, false
			}
			seen[i] = true
			if found++; found == n {
				return out, true
			}
		}
	}
	return out, false
}

// notDrawn tells /dissect/events why a record has no picture.
func (w *Writer) notDrawn(r *dissect.Record, what string) error {
	return w.event(r.Time, levelWarning, fmt.Sprintf("%s %s (%s stream %d, offset %d): %s not drawn: a coordinate is missing or not finite",
		r.Proto, r.Type, r.Transport, r.Stream, r.Offset, what))
}

// derivedChannel returns the channel of a derived topic, or nil when the
// topics are at their limit.
func (w *Writer) derivedChannel(r *dissect.Record, k topicKey, topicf func() string, schema string) (*channel, error) {
	if c := w.known(k); c != nil {
		return c, nil
	}
	sid, err := w.foxgloveSchema(schema)
	if err != nil {
		return nil, err
	}
	c, topic := w.free(topicf(), sid, "")
	if c == nil {
		if w.atLimit(r) {
			return nil, nil
		}
		if c, err = w.channel(topic, sid, w.derivedEncoding(), map[string]string{"proto": r.Proto}); err != nil {
			return nil, err
		}
	}
	w.remember(k, c)
	return c, nil
}

// rooted adds a transform from world to frame (identity) the first time
// frame is seen, or each time once MaxTopics frames are remembered.
func (w *Writer) rooted(frame string) {
	if frame == w.rootedLast || frame == "world" {
		return
	}
	if !w.frames[frame] {
		w.tfs = append(w.tfs, transform{parent: "world", child: frame, pos: identity, q: identity})
		if len(w.frames) >= w.o.MaxTopics {
			return
		}
		w.frames[frame] = true
	}
	w.rootedLast = frame
}

func (w *Writer) writeTransforms(r *dissect.Record) error {
	if len(w.tfs) == 0 {
		return nil
	}
	c, err := w.fixed("/tf", "foxglove.FrameTransforms")
	if err != nil {
		return err
	}
	if w.pbDerived() {
		w.out.End(appendPBFrameTransforms(w.begin(c, r.Time), r.Time, w.tfs))
	} else {
		w.out.End(appendFrameTransforms(w.begin(c, r.Time), r.Time, w.tfs))
	}
	w.tfs = w.tfs[:0]
	return nil
}

// A frameName is the frame "PROTO/STREAM" of the pictures of a stream
// whose records name no sender, kept for the stream drawn last.
type frameName struct {
	proto  string
	stream int
	name   string
}

// frame returns the frame of the pictures of r, whose record topic has the
// key k: its sender's, else its stream's.
func (w *Writer) frame(r *dissect.Record, k topicKey) string {
	if k.sender != "" {
		return k.sender
	}
	f := &w.streamFrame
	if f.name == "" || f.proto != r.Proto || f.stream != r.Stream {
		*f = frameName{r.Proto, r.Stream, r.Proto + "/" + strconv.Itoa(r.Stream)}
	}
	return f.name
}

// pose draws a record of a type with a Pose: a PoseInFrame in its frame
// and, when it names a sensor, the transform from the sender's frame to
// SENDER/sensorN.
// m, when not nil, is the memo of r's record topic (see Record), which
// keeps the pose topic's channel.
func (w *Writer) pose(r *dissect.Record, t *dissect.TypeDecl, k topicKey, m *memo) error {
	var c *channel
	if m != nil {
		c = m.pose
	}
	pk := topicKey{decl: t, proto: r.Proto, stream: r.Stream, sender: k.sender, sensor: k.sensor, kind: kindPose}
	if c == nil {
		c = w.known(pk)
	}
	lt := logTime(r.Time)
	if c != nil && w.posedWithin(c, lt) {
		// One pose per PoseInterval of capture time is drawn: the
		// record's coordinates are not even read.
		return nil
	}
	p := t.Pose
	pv := dissect.Object(r.Fields)
	if p.Position != "" {
		pv, _ = r.Fields.Get(p.Position)
	}
	pos, ok := w.xyz(pv, false)
	q := identity
	if ok && p.Orientation != "" {
		qv, _ := r.Fields.Get(p.Orientation)
		q, ok = w.xyz(qv, true)
	}
	if !ok {
		return w.notDrawn(r, "pose")
	}
	if c == nil {
		topic := func() string {
			s := "/pose/" + seg(r.Proto) + "/" + strconv.Itoa(r.Stream) + senderPath(k)
			if p.Name != "" {
				s += "/" + seg(p.Name)
			}
			return s
		}
		var err error
		if c, err = w.derivedChannel(r, pk, topic, "foxglove.PoseInFrame"); c == nil || err != nil {
			return err
		}
		if w.posedWithin(c, lt) {
			return nil // a channel not remembered (MaxTopics)
		}
	}
	if m != nil {
		m.pose = c
	}
	c.posed, c.lastPose = true, lt
	frame := w.frame(r, k)
	if w.pbDerived() {
		w.out.End(appendPBPoseInFrame(w.begin(c, r.Time), r.Time, frame, pos, q))
	} else {
		w.out.End(appendPoseInFrame(w.begin(c, r.Time), r.Time, frame, pos, q))
	}
	w.rooted(frame)
	if k.sensor >= 0 {
		w.tfs = append(w.tfs, transform{parent: frame, child: frame + "/sensor" + strconv.FormatInt(k.sensor, 10), pos: pos, q: q})
	}
	return w.writeTransforms(r)
}

// posedWithin says whether the pose topic c drew a pose less than
// PoseInterval of capture time before the log time lt (and not after it).
func (w *Writer) posedWithin(c *channel, lt uint64) bool {
	return c.posed && w.o.PoseInterval > 0 && lt >= c.lastPose && lt-c.lastPose < uint64(w.o.PoseInterval)
}

// polyline draws a record of a type with a Polyline as a line strip in a
// SceneUpdate, one entity named after the type.
func (w *Writer) polyline(r *dissect.Record, t *dissect.TypeDecl, k topicKey) error {
	pv, _ := r.Fields.Get(t.Polyline)
	if pv.Kind() != dissect.KindArray {
		return w.notDrawn(r, "line")
	}
	w.points = w.points[:0]
	for _, it := range pv.Items() {
		p, ok := w.xyz(it.Value, false)
		if !ok {
			return w.notDrawn(r, "line")
		}
		w.points = append(w.points, p)
	}
	lk := topicKey{decl: t, proto: r.Proto, stream: r.Stream, sender: k.sender, sensor: -1, kind: kindLine}
	topic := func() string {
		s := "/scene/" + seg(r.Proto) + "/" + strconv.Itoa(r.Stream)
		if k.sender != "" {
			s += "/" + seg(k.sender)
		}
		return s + "/" + seg(t.Table())
	}
	c, err := w.derivedChannel(r, lk, topic, "foxglove.SceneUpdate")
	if c == nil || err != nil {
		return err
	}
	frame := w.frame(r, k)
	if w.pbDerived() {
		w.out.End(appendPBLineScene(w.begin(c, r.Time), r.Time, frame, t.Table(), w.points))
	} else {
		w.out.End(appendLineScene(w.begin(c, r.Time), r.Time, frame, t.Table(), w.points))
	}
	w.rooted(frame)
	return w.writeTransforms(r)
}
