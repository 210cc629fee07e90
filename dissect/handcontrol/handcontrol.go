package handcontrol

import (
	"github.com/dissect-tools/dissect/dissect"
)

const protoName = "handcontrol"

// The frame layout (protocols.md §1.3).
const (
	sfdLen    = 8
	headerLen = sfdLen + 3 // SFD, type, size (u16 LE)
	// overhead is the header and the CRC byte.
	overhead = headerLen + 1
)

// sfd is the start-of-frame delimiter.
var sfd = []byte{0xfd, 0xba, 0xdc, 0x01, 0x50, 0xb4, 0x11, 0xff}

// Type codes (protocols.md §1.5).
const (
	codeEmpty          = 0
	codeACK            = 1
	codeERR            = 2
	codeTelemetry      = 3
	codeGetSettings    = 4
	codeSetSettings    = 5
	codeGetGestures    = 6
	codeSaveGesture    = 7
	codeDeleteGesture  = 8
	codePerformById    = 9
	codePerformRaw     = 10
	codeSetPositions   = 11
	codeUpdateTimeSync = 12
	codeGetTelemetry   = 13
	codeStartTelemetry = 14
	codeStopTelemetry  = 15
	codeGetMioPatterns = 16
	codeSetMioPatterns = 17
	numCodes           = 18
)

// Record types: the names of the codes (output contract, "handcontrol").
const (
	TypeEmpty              = "Empty"
	TypeACK                = "ACK"
	TypeERR                = "ERR"
	TypeTelemetry          = "Telemetry"
	TypeGetSettings        = "GetSettings"
	TypeSetSettings        = "SetSettings"
	TypeGetGestures        = "GetGestures"
	TypeSaveGesture        = "SaveGesture"
	TypeDeleteGesture      = "DeleteGesture"
	TypePerformGestureId   = "PerformGestureId"
	TypePerformGestureRaw  = "PerformGestureRaw"
	TypeSetPositions       = "SetPositions"
	TypeUpdateLastTimeSync = "UpdateLastTimeSync"
	TypeGetTelemetry       = "GetTelemetry"
	TypeStartTelemetry     = "StartTelemetry"
	TypeStopTelemetry      = "StopTelemetry"
	TypeGetMioPatterns     = "GetMioPatterns"
	TypeSetMioPatterns     = "SetMioPatterns"
	TypeUnknown            = "unknown"
)

var typeNames = [numCodes]string{
	TypeEmpty, TypeACK, TypeERR, TypeTelemetry, TypeGetSettings, TypeSetSettings,
	TypeGetGestures, TypeSaveGesture, TypeDeleteGesture, TypePerformGestureId,
	TypePerformGestureRaw, TypeSetPositions, TypeUpdateLastTimeSync, TypeGetTelemetry,
	TypeStartTelemetry, TypeStopTelemetry, TypeGetMioPatterns, TypeSetMioPatterns,
}

// typeName returns the record type of a code.
func typeName(code byte) string {
	if int(code) < numCodes {
		return typeNames[code]
	}
	return TypeUnknown
}

// Roles, as written in the role field.
const (
	RoleRequest   = "request"
	RoleResponse  = "response"
	RoleTelemetry = "telemetry"
)

// Options configure the dissector.
type Options struct {
	// ProtoPaths are the import paths for ProtoFiles (like protoc's -I).
	ProtoPaths []string
	// ProtoFiles are .proto files compiled at run time. A message with the
	// full name of a built-in one (e.g. telemetry.Telemetry, see the
	// package documentation) replaces it for its codes; the built-in
	// message is kept for the others.
	ProtoFiles []string
	// Raw shows payloads as raw protobuf wire fields, without a schema. It
	// takes precedence over ProtoFiles (which are still compiled, so that
	// errors in them are reported).
	Raw bool
}

type protocol struct {
	schema *schemaSet
	// noted is set once the run was told the schema set's notes.
	noted bool
}

// New returns the HandControl protocol for one run. It compiles the
// built-in schemas (and the user's .proto files of opt) with protocompile;
// an error names the file and position, e.g.
// "handcontrol: user schema: hand.proto:7:3: syntax error: ...".
//
// The protocol has no default port: streams are chosen by content (see
// Info().Detection) or by a decode-as rule ("serial,handcontrol").
func New(opt Options) (dissect.Protocol, error) {
	s, err := newSchemaSet(opt)
	if err != nil {
		return nil, err
	}
	if _, err := s.types(); err != nil {
		return nil, err
	}
	return &protocol{schema: s}, nil
}

// Info describes the protocol (a new value on each call).
func (p *protocol) Info() dissect.Info {
	return dissect.Info{
		Name:       protoName,
		Proto:      protoName,
		Title:      "HandControl prosthesis (Bluetooth RFCOMM / UART: SFD + CRC-8 + protobuf)",
		Transports: []dissect.Transport{dissect.Serial, dissect.TCP},
		Detection: "the start-of-frame delimiter fd ba dc 01 50 b4 11 ff followed by a frame with a valid CRC-8 (over type, size and payload, or over the SFD too) " +
			"(serial: within the first 512 bytes of a direction; TCP: at its start); " +
			"mid-stream, a delimiter followed by two whole frames",
		Types: p.types(),
	}
}

// types declares the records (a new slice on each call, sharing nothing):
// New checked that the schema set declares without error.
func (p *protocol) types() []dissect.TypeDecl {
	t, err := p.schema.types()
	if err != nil {
		panic(err) // New returned this error already
	}
	return t
}

// Detection bounds.
const (
	// detectWindow is how far into a serial direction the first SFD may
	// start.
	detectWindow = 512
	// detectBig is the frame size beyond which an SFD with a plausible
	// header is enough: the frame would not fit the bytes the framework
	// holds for detection.
	detectBig = 1024
)

// Detect answers Yes when a direction shows the SFD followed by a whole frame
// whose CRC is valid under either convention (or, for a frame over 1 KiB, a header with a known
// code): on serial links the SFD may start anywhere in the first 512 bytes,
// on TCP it must start the direction. It answers Maybe while a frame or the
// window is incomplete, No otherwise.
func (p *protocol) Detect(s *dissect.StreamInfo, _ dissect.Dir, b []byte) dissect.Verdict {
	window := detectWindow
	if s != nil && s.Transport == dissect.TCP {
		window = 1
	}
	for i := 0; i < window && i < len(b); i++ {
		j, found := frames[0].Hunt(b[i:])
		i += j
		if i >= window {
			break
		}
		if !found {
			if i < len(b) {
				return dissect.Maybe // a partial SFD ends b
			}
			break
		}
		rest := b[i:]
		total, ok := frameSize(rest)
		if !ok {
			return dissect.Maybe
		}
		if len(rest) < total {
			if total > detectBig && rest[8] >= codeACK && rest[8] < numCodes {
				return dissect.Yes
			}
			return dissect.Maybe
		}
		if _, _, scope := checkCRC(rest[:total]); scope != "" {
			return dissect.Yes
		}
	}
	if len(b) < window {
		return dissect.Maybe
	}
	return dissect.No
}

// NewParser returns the parser of one stream.
func (p *protocol) NewParser(s *dissect.StreamInfo) dissect.Parser {
	return newParser(p, s)
}

// runNotes returns the notes of the schema set (messages a user schema
// lacks, ...), once per run.
func (p *protocol) runNotes() []string {
	if p.noted {
		return nil
	}
	p.noted = true
	return p.schema.notes
}
