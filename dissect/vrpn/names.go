package vrpn

import "github.com/dissect-tools/dissect/dissect"

// Bounds of the name tables. VRPN ids are int32 values read from the wire,
// so the tables are maps with a cap rather than slices indexed by id.
const (
	// maxIDs is how many sender ids, and separately how many type ids, one
	// direction of a connection may describe. Mainline registers a few
	// dozen.
	maxIDs = 4096
	// maxNameLen is the longest name kept in a table; longer names are
	// cut (mainline's cName is 100 bytes).
	maxNameLen = 255
)

// kind says how the body of a described application type is decoded.
type kind uint8

const (
	kindOther kind = iota // body written as hex
	kindPosQuat
	kindVelocity
	kindAcceleration
	kindButtonChange
	kindButtonStates
	kindAnalog
	kindDial
	kindPing
	kindPong
	// kindReserved: a name that is empty, "*" or the type of another
	// record (cookie, unknown, gap, ...); its messages are written as
	// unknown, so that a record's type always says what its fields are.
	kindReserved
)

// Application type names whose bodies are decoded (output contract).
const (
	namePosQuat      = "vrpn_Tracker Pos_Quat"
	nameVelocity     = "vrpn_Tracker Velocity"
	nameAcceleration = "vrpn_Tracker Acceleration"
	nameButtonChange = "vrpn_Button Change"
	nameButtonStates = "vrpn_Button States"
	nameAnalog       = "vrpn_Analog Channel"
	nameDial         = "vrpn_Dial update"
	namePing         = "vrpn_Base ping_message"
	namePong         = "vrpn_Base pong_message"
)

func kindOf(name string) kind {
	switch name {
	case namePosQuat:
		return kindPosQuat
	case nameVelocity:
		return kindVelocity
	case nameAcceleration:
		return kindAcceleration
	case nameButtonChange:
		return kindButtonChange
	case nameButtonStates:
		return kindButtonStates
	case nameAnalog:
		return kindAnalog
	case nameDial:
		return kindDial
	case namePing:
		return kindPing
	case namePong:
		return kindPong
	case "", "*", TypeCookie, TypeUDPCallback, TypeSenderDescription, TypeTypeDescription, TypeUDPDescription,
		TypeLogDescription, TypeDisconnect, TypeUnknown, dissect.TypeGap, dissect.TypeSkipped:
		return kindReserved
	}
	return kindOther
}

// typeEntry is a described message type.
type typeEntry struct {
	name string
	kind kind
}

// table holds the names that one direction of one connection described
// (SENDER_DESCRIPTION, TYPE_DESCRIPTION). Ids are per direction: each side
// numbers its own senders and types (README fact 5).
type table struct {
	senders map[int32]string
	types   map[int32]typeEntry
}

func (t *table) sender(id int32) (string, bool) {
	if t == nil {
		return "", false
	}
	s, ok := t.senders[id]
	return s, ok
}

func (t *table) typ(id int32) (typeEntry, bool) {
	if t == nil {
		return typeEntry{}, false
	}
	e, ok := t.types[id]
	return e, ok
}

// setSender records name for sender id. It reports false when the table is
// full and id is new. name is copied only when it changes.
func (t *table) setSender(id int32, name []byte) bool {
	name = name[:min(len(name), maxNameLen)]
	if old, ok := t.senders[id]; ok {
		if old != string(name) {
			t.senders[id] = string(name)
		}
		return true
	}
	if t.senders == nil {
		t.senders = make(map[int32]string)
	}
	if len(t.senders) >= maxIDs {
		return false
	}
	t.senders[id] = string(name)
	return true
}

// setType records name for type id, like setSender.
func (t *table) setType(id int32, name []byte) bool {
	name = name[:min(len(name), maxNameLen)]
	if old, ok := t.types[id]; ok {
		if old.name != string(name) {
			s := string(name)
			t.types[id] = typeEntry{name: s, kind: kindOf(s)}
		}
		return true
	}
	if t.types == nil {
		t.types = make(map[int32]typeEntry)
	}
	if len(t.types) >= maxIDs {
		return false
	}
	s := string(name)
	t.types[id] = typeEntry{name: s, kind: kindOf(s)}
	return true
}

// view is where a message's ids are looked up: first the table of the
// connection direction that names them, then a local one (UDP flows that
// carry descriptions themselves).
type view struct {
	primary, local *table
}

func (v view) sender(id int32) (string, bool) {
	if s, ok := v.primary.sender(id); ok {
		return s, true
	}
	return v.local.sender(id)
}

func (v view) typ(id int32) (typeEntry, bool) {
	if e, ok := v.primary.typ(id); ok {
		return e, true
	}
	return v.local.typ(id)
}
