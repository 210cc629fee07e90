package dissect

// A protocol declares every record type it emits ([Info.Types]): each
// type's fields with their kinds, and the roles that tell consumers what a
// type or field means (a request and its reply, a pose, a sender) so that
// no consumer has to name a protocol. The display filter's field names,
// `dissect protocols --fields` and `--schema`, the Parquet columns and the
// MCAP channel schemas all come from these declarations.

// TypeDecl declares one record type.
type TypeDecl struct {
	// Type is the record's "type" key. "*" declares the types a protocol
	// names from the wire and does not know (VRPN's application types):
	// every such record has this shape.
	Type string
	// Variant, when set, makes this declaration apply only to the records
	// of Type whose field Variant.Key holds the string Variant.Value. A
	// type that has variants (a HandControl code sent as a request and
	// answered as a response) is declared once per variant, and every
	// record of it matches exactly one; each variant is its own table and
	// its own MCAP schema ([TypeDecl.Table]).
	Variant *Variant
	Doc     string // one line
	Fields  []FieldDecl
	// Exchange says whether the type is one half of a request/reply pair
	// (-z rtt).
	Exchange Exchange
	// Pose, when set, says the record places something in space (MCAP's
	// foxglove.PoseInFrame and transforms; the 3D panel).
	Pose *Pose
	// Polyline names a field holding an array of points, each [x, y, z]
	// or {x, y, z}, to be drawn as a line strip.
	Polyline string
	// Heartbeat marks a type sent only to say the sender is alive.
	Heartbeat bool
	// Context marks a type whose records set how later records of their
	// stream decode (VRPN's cookie and its sender and type names): a cut
	// (-r FILE -Y FILTER -w OUT) keeps their packets with those of the
	// records that pass, so that the cut decodes the same again.
	Context bool
}

// Variant selects the records of a type by the string value of a field.
type Variant struct {
	Key, Value string
}

// Table names the declaration's own table (Parquet partition, MCAP topic
// leaf): the type, or "TYPE.VALUE" for a variant.
func (t *TypeDecl) Table() string {
	if t.Variant == nil {
		return t.Type
	}
	return t.Type + "." + t.Variant.Value
}

// Field returns the declaration of the top-level field name, or nil.
func (t *TypeDecl) Field(name string) *FieldDecl {
	return findField(t.Fields, name)
}

// FieldWith returns the first top-level field with role ro, or nil.
func (t *TypeDecl) FieldWith(ro Role) *FieldDecl {
	for i := range t.Fields {
		if t.Fields[i].Role == ro {
			return &t.Fields[i]
		}
	}
	return nil
}

func findField(fs []FieldDecl, name string) *FieldDecl {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

// FieldDecl declares one field: its key, the kind of its value, and for
// arrays and objects what they hold.
type FieldDecl struct {
	Name string // key; "" for an array's items
	// Kind is the kind every value of the field has: KindInt, KindUint,
	// KindFloat (float64), KindFloat32, KindBool, KindString, KindBytes,
	// KindTime, KindArray (items declared by Elem) or KindObject (keys
	// declared by Fields). KindNull is not a kind a field declares.
	Kind   Kind
	Elem   *FieldDecl  // KindArray: the items
	Fields []FieldDecl // KindObject: the keys, in wire order
	// Required: every record of the type carries the field (inside an
	// object: every value of the object carries the key).
	Required bool
	// Enum, when set, lists the values a string may take.
	Enum []string
	Unit string // "m", "rad", "ms", "%", "deg", "s", ...; "" when none
	Doc  string // one line
	Role Role
}

// Role says what a field means to consumers.
type Role uint8

// Field roles.
const (
	RoleNone Role = iota
	// RoleLatency: a reply's round trip from its request, in ms.
	RoleLatency
	// RoleRequestKey: on a request, the key that identifies it; on a
	// reply, the key of the request it answers (HandControl: a request's
	// code and a response's request_code).
	RoleRequestKey
	// RoleSequence: a sequence number the sender increments.
	RoleSequence
	// RoleSender: the name of the device or object that sent the
	// message within its stream (VRPN's sender). Pose frames are named
	// after it.
	RoleSender
	// RoleSensor: the number of one of the sender's sensors; a pose is
	// then the transform from the sender's frame to SENDER/sensorN.
	RoleSensor
	// RoleSentTime: the time the sender says it sent the message.
	RoleSentTime
)

var roleNames = [...]string{"", "latency", "request_key", "sequence", "sender", "sensor", "sent_time"}

// String returns the role's name as `dissect protocols --fields` shows
// it ("" for RoleNone).
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "role?"
}

// Exchange is a type's part in a request/reply pair.
type Exchange struct {
	Role ExchangeRole
	// Answers, on a reply, names the request type it always answers
	// ("ping" for "pong"). Empty: the reply's RoleRequestKey field names
	// the request, by the key of the request seen on the same stream.
	Answers string
}

// ExchangeRole is Request, Reply or neither.
type ExchangeRole uint8

// Exchange roles.
const (
	NoExchange ExchangeRole = iota
	Request
	Reply
)

// Pose says where a record's position and orientation are. Its frame is
// named by the type's RoleSender field (and RoleSensor child frames), or
// "PROTO/STREAM" when it has none.
type Pose struct {
	// Position names a field holding [x, y, z] or {x, y, z}; "" means the
	// record's own top-level fields x, y and z.
	Position string
	// Orientation names a field holding a quaternion {x, y, z, w}; "" for
	// none (identity).
	Orientation string
	// Name is the leaf of the derived topic ("actuator"); "" for none.
	Name string
}

// Common declarations: the events every stream may carry, whatever its
// protocol (proto "*" in `dissect protocols --schema`).
func EventTypes() []TypeDecl {
	return []TypeDecl{
		{Type: TypeGap, Doc: "bytes of this direction that were never captured (length says how many)"},
		{Type: TypeSkipped, Doc: "bytes seen but not decoded (length says how many)", Fields: []FieldDecl{
			{Name: "reason", Kind: KindString, Required: true, Doc: "why the bytes were not decoded, with the offset of the first error"},
		}},
	}
}
