package mcapout

import (
	"math"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The Foxglove message types of the derived topics as protobuf, with the
// field names, numbers and types of Foxglove's published schemas
// (github.com/foxglove/foxglove-sdk, schemas/proto/foxglove/*.proto): the
// types dissect writes in full, the primitives a SceneEntity may hold and
// dissect never writes (arrows, cubes, ...) as messages without fields, so
// that those repeated fields read as empty.

type fdp = descriptorpb.FieldDescriptorProto

func dbl(name string, n int32) *fdp {
	return scalarField(name, n, descriptorpb.FieldDescriptorProto_TYPE_DOUBLE)
}

func pstr(name string, n int32) *fdp {
	return scalarField(name, n, descriptorpb.FieldDescriptorProto_TYPE_STRING)
}

func sub(name string, n int32, typ string) *fdp { return msgField(name, n, typ, false) }

func subs(name string, n int32, typ string) *fdp { return msgField(name, n, typ, true) }

func enumField(name string, n int32, typ string) *fdp {
	f := scalarField(name, n, descriptorpb.FieldDescriptorProto_TYPE_ENUM)
	f.TypeName = proto.String(typ)
	return f
}

func message(name string, fields ...*fdp) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
}

func enum(name string, values ...string) *descriptorpb.EnumDescriptorProto {
	e := &descriptorpb.EnumDescriptorProto{Name: proto.String(name)}
	for i, v := range values {
		e.Value = append(e.Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String(v), Number: proto.Int32(int32(i))})
	}
	return e
}

const (
	fxTime     = ".google.protobuf.Timestamp"
	fxVector3  = ".foxglove.Vector3"
	fxQuat     = ".foxglove.Quaternion"
	fxPose     = ".foxglove.Pose"
	fxColor    = ".foxglove.Color"
	fxPoint3   = ".foxglove.Point3"
	fxEntity   = ".foxglove.SceneEntity"
	fxLine     = ".foxglove.LinePrimitive"
	fxDeletion = ".foxglove.SceneEntityDeletion"
	fxKV       = ".foxglove.KeyValuePair"
	fxFrameTf  = ".foxglove.FrameTransform"
)

// foxgloveDescriptorSet returns the FileDescriptorSet of Foxglove's
// message type name (foxglove.PoseInFrame, FrameTransforms, SceneUpdate
// or Log): one file, package foxglove, holding it and the types it uses.
func foxgloveDescriptorSet(name string) ([]byte, error) {
	vector3 := message("Vector3", dbl("x", 1), dbl("y", 2), dbl("z", 3))
	quaternion := message("Quaternion", dbl("x", 1), dbl("y", 2), dbl("z", 3), dbl("w", 4))
	pose := message("Pose", sub("position", 1, fxVector3), sub("orientation", 2, fxQuat))
	var msgs []*descriptorpb.DescriptorProto
	deps := []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto)}
	switch name {
	case "foxglove.PoseInFrame":
		msgs = append(msgs, message("PoseInFrame", sub("timestamp", 1, fxTime), pstr("frame_id", 2), sub("pose", 3, fxPose)),
			pose, vector3, quaternion)
	case "foxglove.FrameTransforms":
		msgs = append(msgs, message("FrameTransforms", subs("transforms", 1, fxFrameTf)),
			message("FrameTransform", sub("timestamp", 1, fxTime), pstr("parent_frame_id", 2), pstr("child_frame_id", 3),
				sub("translation", 4, fxVector3), sub("rotation", 5, fxQuat)),
			vector3, quaternion)
	case "foxglove.SceneUpdate":
		deletion := message("SceneEntityDeletion", sub("timestamp", 1, fxTime), enumField("type", 2, fxDeletion+".Type"), pstr("id", 3))
		deletion.EnumType = append(deletion.EnumType, enum("Type", "MATCHING_ID", "ALL"))
		line := message("LinePrimitive", enumField("type", 1, fxLine+".Type"), sub("pose", 2, fxPose), dbl("thickness", 3),
			scalarField("scale_invariant", 4, descriptorpb.FieldDescriptorProto_TYPE_BOOL), subs("points", 5, fxPoint3),
			sub("color", 6, fxColor), subs("colors", 7, fxColor),
			repeated(scalarField("indices", 8, descriptorpb.FieldDescriptorProto_TYPE_FIXED32)))
		line.EnumType = append(line.EnumType, enum("Type", "LINE_STRIP", "LINE_LOOP", "LINE_LIST"))
		msgs = append(msgs, message("SceneUpdate", subs("deletions", 1, fxDeletion), subs("entities", 2, fxEntity)),
			deletion,
			message("SceneEntity", sub("timestamp", 1, fxTime), pstr("frame_id", 2), pstr("id", 3),
				sub("lifetime", 4, ".google.protobuf.Duration"),
				scalarField("frame_locked", 5, descriptorpb.FieldDescriptorProto_TYPE_BOOL),
				subs("metadata", 6, fxKV), subs("arrows", 7, ".foxglove.ArrowPrimitive"), subs("cubes", 8, ".foxglove.CubePrimitive"),
				subs("spheres", 9, ".foxglove.SpherePrimitive"), subs("cylinders", 10, ".foxglove.CylinderPrimitive"),
				subs("lines", 11, fxLine), subs("triangles", 12, ".foxglove.TriangleListPrimitive"),
				subs("texts", 13, ".foxglove.TextPrimitive"), subs("models", 14, ".foxglove.ModelPrimitive")),
			message("KeyValuePair", pstr("key", 1), pstr("value", 2)),
			line, pose, vector3, quaternion,
			message("Point3", dbl("x", 1), dbl("y", 2), dbl("z", 3)),
			message("Color", dbl("r", 1), dbl("g", 2), dbl("b", 3), dbl("a", 4)))
		for _, unused := range []string{"ArrowPrimitive", "CubePrimitive", "SpherePrimitive", "CylinderPrimitive", "TriangleListPrimitive", "TextPrimitive", "ModelPrimitive"} {
			msgs = append(msgs, message(unused))
		}
		deps = append(deps, protodesc.ToFileDescriptorProto(durationpb.File_google_protobuf_duration_proto))
	case "foxglove.Log":
		log := message("Log", sub("timestamp", 1, fxTime), enumField("level", 2, ".foxglove.Log.Level"), pstr("message", 3),
			pstr("name", 4), pstr("file", 5), scalarField("line", 6, descriptorpb.FieldDescriptorProto_TYPE_FIXED32))
		log.EnumType = append(log.EnumType, enum("Level", "UNKNOWN", "DEBUG", "INFO", "WARNING", "ERROR", "FATAL"))
		msgs = append(msgs, log)
	}
	file := &descriptorpb.FileDescriptorProto{
		Name: proto.String("foxglove/" + name[len("foxglove."):] + ".proto"), Package: proto.String("foxglove"),
		Syntax: proto.String("proto3"), MessageType: msgs,
	}
	for _, d := range deps {
		file.Dependency = append(file.Dependency, d.GetName())
	}
	_, data, err := descriptorSet(name, append([]*descriptorpb.FileDescriptorProto{file}, deps...)...)
	return data, err
}

// appendDouble appends a proto3 double field, nothing when it is +0.
func appendDouble(b []byte, num protowire.Number, f float64) []byte {
	if math.Float64bits(f) == 0 {
		return b
	}
	return protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), math.Float64bits(f))
}

// appendPBXYZ appends a Vector3 or Point3 (x, y, z) as field num, with w
// as field 4 (a Quaternion) when q.
func appendPBXYZ(b []byte, num protowire.Number, v vec, q bool) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b) + 1
	b = append(b, 0)
	for i := range 3 {
		b = appendDouble(b, protowire.Number(i+1), v.f[i])
	}
	if q {
		b = appendDouble(b, 4, v.f[3])
	}
	return endLen(b, at)
}

func appendPBTime(b []byte, num protowire.Number, t time.Time) []byte {
	return appendTimestamp(protowire.AppendTag(b, num, protowire.BytesType), time.Unix(0, int64(logTime(t))))
}

// appendPBPose appends a foxglove.Pose as field num.
func appendPBPose(b []byte, num protowire.Number, pos, q vec) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b) + 1
	b = appendPBXYZ(append(b, 0), 1, pos, false)
	return endLen(appendPBXYZ(b, 2, q, true), at)
}

// appendPBPoseInFrame appends a foxglove.PoseInFrame.
func appendPBPoseInFrame(b []byte, t time.Time, frame string, pos, q vec) []byte {
	b = appendPBTime(b, 1, t)
	b = appendPBString(b, 2, frame)
	return appendPBPose(b, 3, pos, q)
}

// appendPBFrameTransforms appends a foxglove.FrameTransforms.
func appendPBFrameTransforms(b []byte, t time.Time, tfs []transform) []byte {
	for _, tf := range tfs {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b) + 1
		b = appendPBTime(append(b, 0), 1, t)
		b = appendPBString(b, 2, tf.parent)
		b = appendPBString(b, 3, tf.child)
		b = appendPBXYZ(b, 4, tf.pos, false)
		b = appendPBXYZ(b, 5, tf.q, true)
		b = endLen(b, at)
	}
	return b
}

// appendPBLineScene appends the SceneUpdate of appendLineScene: one
// entity, one line strip through points, the same pose, thickness and
// color.
func appendPBLineScene(b []byte, t time.Time, frame, id string, points []vec) []byte {
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	at := len(b) + 1
	b = appendPBTime(append(b, 0), 1, t)
	b = appendPBString(b, 2, frame)
	b = appendPBString(b, 3, id)
	b = protowire.AppendVarint(protowire.AppendTag(b, 5, protowire.VarintType), 1) // frame_locked
	b = protowire.AppendTag(b, 11, protowire.BytesType)
	line := len(b) + 1
	b = appendPBPose(append(b, 0), 2, identity, identity)
	b = appendDouble(b, 3, lineThickness)
	b = protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), 1) // scale_invariant
	for _, p := range points {
		b = appendPBXYZ(b, 5, p, false)
	}
	b = appendPBXYZ(b, 6, lineColor, true) // r, g, b, a as x, y, z, w
	return endLen(endLen(b, line), at)
}

// appendPBLog appends a foxglove.Log from dissect.
func appendPBLog(b []byte, t time.Time, level int, msg string) []byte {
	b = appendPBTime(b, 1, t)
	b = appendPBVarint(b, 2, uint64(level))
	b = appendPBString(b, 3, msg)
	return appendPBString(b, 4, "dissect")
}

// foxgloveSchema returns the id of the schema of Foxglove's message type
// name in the writer's encoding, writing it first.
func (w *Writer) foxgloveSchema(name string) (uint16, error) {
	if id, ok := w.schemas[name]; ok {
		return id, nil
	}
	if !w.pbDerived() {
		return w.schema(name, foxgloveJSONSchema(name))
	}
	data, err := foxgloveDescriptorSet(name)
	if err != nil {
		return 0, err
	}
	id, err := w.newSchema(name, EncodingProtobuf, data)
	if err == nil {
		w.schemas[name] = id
	}
	return id, err
}

// pbDerived says whether the derived topics are protobuf.
func (w *Writer) pbDerived() bool { return w.o.Encoding == EncodingProtobuf }

// derivedEncoding is the message encoding of the derived topics.
func (w *Writer) derivedEncoding() string {
	if w.pbDerived() {
		return EncodingProtobuf
	}
	return EncodingJSON
}
