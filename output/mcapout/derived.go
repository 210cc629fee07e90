package mcapout

import (
	"fmt"
	"math"

	"github.com/dissect-tools/dissect/dissect"
)

// derived writes the pictures of r, if it has one: a VRPN tracker's pose
// and transform, a Deltarobot actuator's pose, a Deltarobot curve.
func (w *Writer) derived(r *dissect.Record) error {
	w.slab = w.slab[:0]
	switch {
	case r.Proto == "vrpn" && r.Type == "vrpn_Tracker Pos_Quat":
		return w.trackerPose(r)
	case r.Proto == "deltarobot" && r.Type == "actuator_position":
		return w.actuator(r)
	case r.Proto == "deltarobot" && r.Type == "curve":
		return w.curve(r)
	}
	return nil
}

// num formats v as the JSON of records writes it, if it is a finite number.
func (w *Writer) num(v dissect.Value, ok bool) ([]byte, bool) {
	switch v.Kind() {
	case dissect.KindFloat, dissect.KindFloat32, dissect.KindInt, dissect.KindUint:
	default:
		return nil, false
	}
	if f := v.Float(); !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	start := len(w.slab)
	w.slab = w.enc.AppendValue(w.slab, &v)
	return w.slab[start:len(w.slab):len(w.slab)], true
}

// xyz reads three numbers: the items of an array, or the keys x, y, z of
// an object (and w, when q).
func (w *Writer) xyz(v dissect.Value, q bool) (vec, bool) {
	var out vec
	var ok [4]bool
	switch v.Kind() {
	case dissect.KindArray:
		it := v.Items()
		if len(it) != 3 {
			return out, false
		}
		out.x, ok[0] = w.num(it[0].Value, true)
		out.y, ok[1] = w.num(it[1].Value, true)
		out.z, ok[2] = w.num(it[2].Value, true)
		ok[3] = true
	case dissect.KindObject:
		out.x, ok[0] = w.num(v.Get("x"))
		out.y, ok[1] = w.num(v.Get("y"))
		out.z, ok[2] = w.num(v.Get("z"))
		ok[3] = true
		if q {
			out.w, ok[3] = w.num(v.Get("w"))
		}
	}
	return out, ok[0] && ok[1] && ok[2] && ok[3]
}

// notDrawn tells /dissect/events why a record has no picture.
func (w *Writer) notDrawn(r *dissect.Record, what string) error {
	return w.event(r.Time, levelWarning, fmt.Sprintf("%s %s (%s stream %d, offset %d): %s not drawn: a coordinate is missing or not finite",
		r.Proto, r.Type, r.Transport, r.Stream, r.Offset, what))
}

// derivedChannel returns the channel of a derived topic, or nil when the
// topics are at their limit.
func (w *Writer) derivedChannel(r *dissect.Record, k topicKey, topicf func() string, schema, data string) (*channel, error) {
	if c, ok := w.topics[k]; ok {
		return c, nil
	}
	topic := topicf()
	if c, ok := w.byTopic[topic]; ok {
		w.topics[k] = c
		return c, nil
	}
	if w.atLimit(r) {
		return nil, nil
	}
	c, err := w.channel(topic, schema, data, map[string]string{"proto": r.Proto})
	if err == nil {
		w.topics[k] = c
	}
	return c, err
}

// rooted adds a transform from world to frame (identity) the first time
// frame is seen.
func (w *Writer) rooted(frame string) {
	if !w.frames[frame] && frame != "world" {
		w.frames[frame] = true
		w.tfs = append(w.tfs, transform{parent: "world", child: frame, pos: identity, q: identity})
	}
}

func (w *Writer) writeTransforms(r *dissect.Record) error {
	if len(w.tfs) == 0 {
		return nil
	}
	c, err := w.fixed("/tf", "foxglove.FrameTransforms", schemaFrameTransforms)
	if err != nil {
		return err
	}
	w.buf = appendFrameTransforms(w.buf[:0], r.Time, w.tfs)
	w.tfs = w.tfs[:0]
	return w.write(c, r.Time, w.buf)
}

// trackerPose draws a VRPN tracker report: a PoseInFrame in the sender's
// frame and the transform from the sender to the sensor.
func (w *Writer) trackerPose(r *dissect.Record) error {
	sv, ok1 := r.Fields.Get("sender")
	nv, ok2 := r.Fields.Get("sensor")
	if !ok1 || !ok2 || sv.Kind() != dissect.KindString || nv.Kind() != dissect.KindInt {
		return nil // the decoder warned; the record is on its topic
	}
	pv, _ := r.Fields.Get("pos")
	qv, _ := r.Fields.Get("quat")
	pos, ok1 := w.xyz(pv, false)
	q, ok2 := w.xyz(qv, true)
	if !ok1 || !ok2 {
		return w.notDrawn(r, "pose")
	}
	sender, sensor := sv.Str(), int(nv.Int())
	topic := func() string { return fmt.Sprintf("/pose/vrpn/%d/%s/sensor%d", r.Stream, seg(sender), sensor) }
	k := topicKey{proto: r.Proto, stream: r.Stream, sender: sender, sensor: sensor, kind: kindPose}
	c, err := w.derivedChannel(r, k, topic, "foxglove.PoseInFrame", schemaPoseInFrame)
	if c == nil || err != nil {
		return err
	}
	w.buf = appendPoseInFrame(w.buf[:0], r.Time, sender, pos, q)
	if err := w.write(c, r.Time, w.buf); err != nil {
		return err
	}
	w.rooted(sender)
	w.tfs = append(w.tfs, transform{parent: sender, child: fmt.Sprintf("%s/sensor%d", sender, sensor), pos: pos, q: q})
	return w.writeTransforms(r)
}

// deltaFrame is the frame of a Deltarobot stream's coordinates,
// "deltarobot/STREAM" (the last one is kept).
func (w *Writer) deltaFrame(stream int) string {
	if stream != w.lastDeltaStream || w.lastDeltaFrame == "" {
		w.lastDeltaStream, w.lastDeltaFrame = stream, fmt.Sprintf("deltarobot/%d", stream)
	}
	return w.lastDeltaFrame
}

// actuator draws a Deltarobot actuator_position as a PoseInFrame.
func (w *Writer) actuator(r *dissect.Record) error {
	obj := dissect.Object(r.Fields)
	pos, ok := w.xyz(obj, false)
	if !ok {
		return w.notDrawn(r, "actuator position")
	}
	k := topicKey{proto: r.Proto, stream: r.Stream, sensor: -1, kind: kindPose}
	c, err := w.derivedChannel(r, k, func() string { return fmt.Sprintf("/pose/deltarobot/%d/actuator", r.Stream) }, "foxglove.PoseInFrame", schemaPoseInFrame)
	if c == nil || err != nil {
		return err
	}
	frame := w.deltaFrame(r.Stream)
	w.buf = appendPoseInFrame(w.buf[:0], r.Time, frame, pos, identity)
	if err := w.write(c, r.Time, w.buf); err != nil {
		return err
	}
	w.rooted(frame)
	return w.writeTransforms(r)
}

// curve draws a Deltarobot curve as a line strip in a SceneUpdate.
func (w *Writer) curve(r *dissect.Record) error {
	pv, _ := r.Fields.Get("points")
	if pv.Kind() != dissect.KindArray {
		return w.notDrawn(r, "curve")
	}
	w.points = w.points[:0]
	for _, it := range pv.Items() {
		p, ok := w.xyz(it.Value, false)
		if !ok {
			return w.notDrawn(r, "curve")
		}
		w.points = append(w.points, p)
	}
	k := topicKey{proto: r.Proto, stream: r.Stream, sensor: -1, kind: kindCurve}
	c, err := w.derivedChannel(r, k, func() string { return fmt.Sprintf("/scene/deltarobot/%d/curve", r.Stream) }, "foxglove.SceneUpdate", schemaSceneUpdate)
	if c == nil || err != nil {
		return err
	}
	frame := w.deltaFrame(r.Stream)
	w.buf = appendLineScene(w.buf[:0], r.Time, frame, "curve", w.points)
	if err := w.write(c, r.Time, w.buf); err != nil {
		return err
	}
	w.rooted(frame)
	return w.writeTransforms(r)
}
