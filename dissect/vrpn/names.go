package vrpn

import (
	"fmt"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/exchange"
)

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
	// maxRunNameBytes bounds the names held by all the tables of a run,
	// across connections (maxIDs alone let 100 open connections hold
	// 100 × 2 × 8,192 names, about 600 MB). A name costs its length plus
	// nameCost, a generous bound of its map entry and string header, so
	// 16 MiB is at least 52,000 names of the longest kind and some
	// 130,000 of mainline's: thousands of connections of a real run. A
	// connection's names are given back when it ends (and no UDP route
	// still reads them).
	maxRunNameBytes = 16 << 20
	nameCost        = 64
)

// nameBudget is the bound, shared by the tables of a run, on the bytes
// their names hold.
type nameBudget struct {
	held, max int64
}

// take charges n bytes (n may be negative: given back); it reports false,
// charging nothing, when they do not fit.
func (b *nameBudget) take(n int64) bool {
	if b == nil {
		return true
	}
	if n > 0 && b.held+n > b.max {
		return false
	}
	b.held += n
	return true
}

// String writes the bound for messages: in MiB or KiB when it is a whole
// number of them, else in bytes.
func (b *nameBudget) String() string {
	switch {
	case b == nil:
		return "unbounded"
	case b.max%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b.max>>20)
	case b.max%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b.max>>10)
	}
	return fmt.Sprintf("%d bytes", b.max)
}

// setResult says what became of a description.
type setResult uint8

const (
	setOK         setResult = iota
	setTableFull            // the direction already holds maxIDs ids of the kind
	setBudgetFull           // the run's tables hold maxRunNameBytes
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
	kindCatalog // a type of the catalogue (catalog.go)
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

// newTypeEntry is the entry of a type described with name.
func newTypeEntry(name string) typeEntry {
	k := kindOf(name)
	if k == kindCatalog {
		return typeEntry{name: name, kind: k, def: catalogued[name]}
	}
	return typeEntry{name: name, kind: k}
}

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
	if _, ok := catalogued[name]; ok {
		return kindCatalog
	}
	return kindOther
}

// typeEntry is a described message type.
type typeEntry struct {
	name string
	kind kind
	def  *msgDef // kindCatalog: its definition
}

// table holds the names that one direction of one connection described
// (SENDER_DESCRIPTION, TYPE_DESCRIPTION). Ids are per direction: each side
// numbers its own senders and types (README fact 5).
type table struct {
	senders map[int32]string
	types   map[int32]typeEntry

	budget  *nameBudget // the run's (nil: unbounded, for tests)
	charged int64       // bytes charged to budget
	refused int64       // names not recorded because budget was full
	routes  int         // UDP routes that read this table
	ended   bool        // its connection ended: released when routes is 0
}

// charge moves the table's charge by the cost of a name of oldLen bytes
// becoming one of newLen (isNew: a new id); false when the budget cannot
// take it.
func (t *table) charge(oldLen, newLen int, isNew bool) bool {
	n := int64(newLen - oldLen)
	if isNew {
		n += nameCost
	}
	if !t.budget.take(n) {
		t.refused++
		return false
	}
	t.charged += n
	return true
}

// release gives the table's names back to the budget; it holds none after.
func (t *table) release() {
	t.budget.take(-t.charged)
	t.charged = 0
	t.senders, t.types = nil, nil
}

// End gives the names of the connection's tables back to the run's budget
// (dissect.Ender) and notes how many names the budget refused and how
// many requests were forgotten past the bounds (roundtrip.go).
func (p *parser) End(c *dissect.Ctx) {
	var refused int64
	for d := range p.dirs {
		refused += p.dirs[d].names.refused
		p.dirs[d].names.end()
	}
	if refused > 0 {
		c.Note("%s: %d names not recorded: the name tables of all connections held their bound (%s); messages of those ids are %s", protoName, refused, p.dirs[0].names.budget, TypeUnknown)
	}
	exchange.NoteLost(c, protoName, &p.ex)
}

// end marks the table's connection ended: its names are released unless a
// UDP route still reads them (then when the last route goes).
func (t *table) end() {
	t.ended = true
	if t.routes == 0 {
		t.release()
	}
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

// setSender records name for sender id. When the direction's table is
// full and id is new, or the run's budget cannot take the name, nothing
// changes (an id already named keeps its old name). name is copied only
// when it changes.
func (t *table) setSender(id int32, name []byte) setResult {
	name = name[:min(len(name), maxNameLen)]
	if old, ok := t.senders[id]; ok {
		if old != string(name) {
			if !t.charge(len(old), len(name), false) {
				return setBudgetFull
			}
			t.senders[id] = string(name)
		}
		return setOK
	}
	if len(t.senders) >= maxIDs {
		return setTableFull
	}
	if !t.charge(0, len(name), true) {
		return setBudgetFull
	}
	if t.senders == nil {
		t.senders = make(map[int32]string)
	}
	t.senders[id] = string(name)
	return setOK
}

// setType records name for type id, like setSender.
func (t *table) setType(id int32, name []byte) setResult {
	name = name[:min(len(name), maxNameLen)]
	if old, ok := t.types[id]; ok {
		if old.name != string(name) {
			if !t.charge(len(old.name), len(name), false) {
				return setBudgetFull
			}
			s := string(name)
			t.types[id] = newTypeEntry(s)
		}
		return setOK
	}
	if len(t.types) >= maxIDs {
		return setTableFull
	}
	if !t.charge(0, len(name), true) {
		return setBudgetFull
	}
	if t.types == nil {
		t.types = make(map[int32]typeEntry)
	}
	s := string(name)
	t.types[id] = newTypeEntry(s)
	return setOK
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
