package handcontrol

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dissect-tools/dissect/dissect/pbwalk"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The built-in schemas, compiled at run time from these files.
//
//go:embed schema/v2/*.proto schema/v1/*.proto
var schemaFS embed.FS

// Schema names written in the "schema" field.
const (
	schemaV2  = "v2"
	schemaV1  = "v1"
	schemaRaw = "raw"
)

// Full names of the messages carried by the codes (protocols.md §1.5, §1.6).
// A user schema overrides a code's message by defining one with the same
// full name (or, failing that, the only message with the same short name).
const (
	msgSetSettings    = "settings.SetSettings"
	msgGetSettings    = "settings.GetSettings"
	msgSaveGesture    = "telemetry.SaveGesture"
	msgDeleteGesture  = "telemetry.DeleteGesture"
	msgPerformById    = "telemetry.PerformGestureById"
	msgPerformRaw     = "telemetry.PerformGestureRaw"
	msgSetPositions   = "telemetry.SetPositions"
	msgUpdateTimeSync = "telemetry.UpdateLastTimeSync"
	msgStartTelemetry = "telemetry.StartTelemetry"
	msgSetMioPatterns = "patterns.SetMioPatterns"
	msgError          = "errors.Error"
	msgGetGestures    = "telemetry.GetGestures"
	msgGetTelemetry   = "telemetry.GetTelemetry"
	msgGetMioPatterns = "patterns.GetMioPatterns"
	msgTelemetry      = "telemetry.Telemetry"
	uuidName          = "uuid.UUID" // shown as its string (pbwalk.BuildOptions)
)

// requestMsg and responseMsg give the message of each code sent by the host
// and by the device; "" is an empty message. Code 3 from the device is
// telemetry.
var requestMsg = [numCodes]string{
	codeSetSettings:    msgSetSettings,
	codeSaveGesture:    msgSaveGesture,
	codeDeleteGesture:  msgDeleteGesture,
	codePerformById:    msgPerformById,
	codePerformRaw:     msgPerformRaw,
	codeSetPositions:   msgSetPositions,
	codeUpdateTimeSync: msgUpdateTimeSync,
	codeStartTelemetry: msgStartTelemetry,
	codeSetMioPatterns: msgSetMioPatterns,
}

var responseMsg = [numCodes]string{
	codeERR:            msgError,
	codeTelemetry:      msgTelemetry,
	codeGetSettings:    msgGetSettings,
	codeGetGestures:    msgGetGestures,
	codeGetTelemetry:   msgGetTelemetry,
	codeGetMioPatterns: msgGetMioPatterns,
}

// emptyMsg is the message of codes that carry no payload.
var emptyMsg = pbwalk.EmptyMessage("(empty)")

// schemaSet is the set of messages used for the codes: one per code and
// role, the v1 alternative where v1 differs, and the name written in the
// schema field.
type schemaSet struct {
	raw           bool // Options.Raw: no schema
	req, resp     [numCodes]*pbwalk.Message
	reqName       [numCodes]string // schema name per message ("v2" or the user's)
	respName      [numCodes]string
	reqV1, respV1 [numCodes]*pbwalk.Message
	// quirk is the message of a type-13 reply to GetMioPatterns (16).
	quirk     *pbwalk.Message
	quirkName string
	quirkV1   *pbwalk.Message
	// missing lists the code messages a user schema lacks (built-in v2
	// messages are used for them).
	missing []string
	// notes are told to the run once (see protocol.runNotes).
	notes []string
}

// builtin holds the compiled v2 and v1 schemas, shared by all runs.
var builtin struct {
	once   sync.Once
	v2, v1 map[string]*pbwalk.Message
	err    error
}

// compileFS compiles the .proto files of directory dir of fsys.
func compileFS(fsys fs.FS, dir string) (linker.Files, error) {
	names, err := fs.Glob(fsys, dir+"/*.proto")
	if err != nil {
		return nil, err
	}
	for i := range names {
		names[i] = path.Base(names[i])
	}
	c := protocompile.Compiler{
		Resolver: &protocompile.SourceResolver{Accessor: func(p string) (io.ReadCloser, error) {
			return fsys.Open(dir + "/" + p)
		}},
		MaxParallelism: 1,
	}
	return c.Compile(context.Background(), names...)
}

// index builds a pbwalk.Message for every message of files (and their
// imports).
func index(files linker.Files) map[string]*pbwalk.Message {
	b := pbwalk.NewBuilder(pbwalk.BuildOptions{StringWrappers: []protoreflect.FullName{uuidName}})
	out := map[string]*pbwalk.Message{}
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			if md.IsMapEntry() {
				continue
			}
			out[string(md.FullName())] = b.Message(md)
			walk(md.Messages())
		}
	}
	seen := map[string]bool{}
	var file func(fd protoreflect.FileDescriptor)
	file = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		walk(fd.Messages())
		imps := fd.Imports()
		for i := range imps.Len() {
			file(imps.Get(i).FileDescriptor)
		}
	}
	for _, f := range files {
		file(f)
	}
	return out
}

func loadBuiltin() (v2, v1 map[string]*pbwalk.Message, err error) {
	builtin.once.Do(func() {
		f2, err := compileFS(schemaFS, "schema/v2")
		if err != nil {
			builtin.err = fmt.Errorf("handcontrol: built-in schema v2: %v", err)
			return
		}
		f1, err := compileFS(schemaFS, "schema/v1")
		if err != nil {
			builtin.err = fmt.Errorf("handcontrol: built-in schema v1: %v", err)
			return
		}
		builtin.v2, builtin.v1 = index(f2), index(f1)
	})
	return builtin.v2, builtin.v1, builtin.err
}

// compileUser compiles the user's .proto files. Files are looked up in the
// import paths like protoc does; a file given by a path under one of them is
// named relative to it.
func compileUser(opt Options) (map[string]*pbwalk.Message, error) {
	names := make([]string, len(opt.ProtoFiles))
	for i, f := range opt.ProtoFiles {
		names[i] = f
		for _, ip := range opt.ProtoPaths {
			rel, err := filepath.Rel(ip, f)
			if err == nil && filepath.IsAbs(ip) == filepath.IsAbs(f) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				names[i] = filepath.ToSlash(rel)
				break
			}
		}
	}
	c := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: opt.ProtoPaths}),
		MaxParallelism: 1,
	}
	files, err := c.Compile(context.Background(), names...)
	if err != nil {
		return nil, fmt.Errorf("handcontrol: user schema: %v", err)
	}
	return index(files), nil
}

// userName returns the schema name of a user schema: the base names of its
// files joined with "+".
func userName(files []string) string {
	var b strings.Builder
	for i, f := range files {
		if i > 0 {
			b.WriteByte('+')
		}
		b.WriteString(filepath.Base(f))
	}
	return b.String()
}

// find returns the message named full in msgs, or else the only message
// whose short name matches.
func find(msgs map[string]*pbwalk.Message, full string) *pbwalk.Message {
	if m, ok := msgs[full]; ok {
		return m
	}
	short := full[strings.LastIndexByte(full, '.')+1:]
	var found *pbwalk.Message
	for name, m := range msgs {
		if name == short || strings.HasSuffix(name, "."+short) {
			if found != nil {
				return nil
			}
			found = m
		}
	}
	return found
}

// newSchemaSet prepares the messages of every code for the options.
func newSchemaSet(opt Options) (*schemaSet, error) {
	v2, v1, err := loadBuiltin()
	if err != nil {
		return nil, err
	}
	s := &schemaSet{}
	var user map[string]*pbwalk.Message
	uname := ""
	if len(opt.ProtoFiles) > 0 {
		// Compiled even with Raw, so that a broken file is reported.
		if user, err = compileUser(opt); err != nil {
			return nil, err
		}
		uname = userName(opt.ProtoFiles)
	}
	if opt.Raw {
		s.raw = true
		return s, nil
	}
	pick := func(full string) (m *pbwalk.Message, name string, alt *pbwalk.Message) {
		if full == "" {
			return emptyMsg, schemaV2, nil
		}
		if user != nil {
			if m := find(user, full); m != nil {
				return m, uname, nil
			}
			if !slices.Contains(s.missing, full) {
				s.missing = append(s.missing, full)
			}
		}
		m = v2[full]
		if a := v1[full]; a != nil && a != m {
			alt = a
		}
		return m, schemaV2, alt
	}
	for c := range numCodes {
		s.req[c], s.reqName[c], s.reqV1[c] = pick(requestMsg[c])
		s.resp[c], s.respName[c], s.respV1[c] = pick(responseMsg[c])
	}
	s.quirk, s.quirkName, s.quirkV1 = pick(msgGetMioPatterns)
	if len(s.missing) > 0 {
		s.notes = append(s.notes, protoName+": the user schema has no message "+strings.Join(s.missing, ", ")+
			"; the built-in v2 messages are used for them")
	}
	if err := s.checkQuirk(); err != nil {
		// A record type declares one payload shape: the quirk's message
		// cannot share the GetTelemetry reply's, so it is not used.
		s.quirk, s.quirkName, s.quirkV1 = nil, schemaRaw, nil
		s.notes = append(s.notes, protoName+": a type-13 reply to GetMioPatterns is decoded raw: "+err.Error())
	}
	return s, nil
}
