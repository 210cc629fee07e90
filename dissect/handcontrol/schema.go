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

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/encoding/protowire"
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
	msgSetSettings      = "settings.SetSettings"
	msgGetSettings      = "settings.GetSettings"
	msgSaveGesture      = "telemetry.SaveGesture"
	msgDeleteGesture    = "telemetry.DeleteGesture"
	msgPerformById      = "telemetry.PerformGestureById"
	msgPerformRaw       = "telemetry.PerformGestureRaw"
	msgSetPositions     = "telemetry.SetPositions"
	msgUpdateTimeSync   = "telemetry.UpdateLastTimeSync"
	msgStartTelemetry   = "telemetry.StartTelemetry"
	msgSetMioPatterns   = "patterns.SetMioPatterns"
	msgError            = "errors.Error"
	msgGetGestures      = "telemetry.GetGestures"
	msgGetTelemetry     = "telemetry.GetTelemetry"
	msgGetMioPatterns   = "patterns.GetMioPatterns"
	msgTelemetry        = "telemetry.Telemetry"
	uuidName            = "uuid.UUID"
	maxDenseFieldNumber = 64
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

// msgInfo is a message type prepared for the wire walker: its fields by
// number, with names, kinds, enums and nested messages resolved once.
type msgInfo struct {
	name   string
	fields []fieldInfo // sorted by number
	dense  []int8      // field index + 1 by number, for numbers < len(dense)
	uuid   bool        // uuid.UUID: rendered as its string
	simple bool        // no repeated field and at most 64 fields: see decoder.fast
}

type fieldInfo struct {
	num    protowire.Number
	name   string
	kind   protoreflect.Kind
	list   bool // repeated (map fields are repeated entry messages)
	packed bool // a repeated scalar number: may come packed (wire type 2)
	msg    *msgInfo
	enum   *enumInfo
}

type enumInfo struct {
	name  string
	dense []string         // names of values 0..len-1, "" for holes
	other map[int32]string // values outside dense
}

func (e *enumInfo) lookup(v int32) (string, bool) {
	if v >= 0 && int(v) < len(e.dense) {
		s := e.dense[v]
		return s, s != ""
	}
	s, ok := e.other[v]
	return s, ok
}

// index returns the index in m.fields of the field with number num, or -1.
func (m *msgInfo) index(num protowire.Number) int {
	if m == nil {
		return -1
	}
	if num < protowire.Number(len(m.dense)) {
		return int(m.dense[num]) - 1
	}
	i, ok := slices.BinarySearchFunc(m.fields, num, func(f fieldInfo, n protowire.Number) int { return int(f.num - n) })
	if ok {
		return i
	}
	return -1
}

// field returns the field with number num, or nil.
func (m *msgInfo) field(num protowire.Number) *fieldInfo {
	if i := m.index(num); i >= 0 {
		return &m.fields[i]
	}
	return nil
}

// emptyMsg is the message of codes that carry no payload.
var emptyMsg = &msgInfo{name: "(empty)"}

// builder turns descriptors into msgInfo, once per message.
type builder struct {
	msgs  map[protoreflect.FullName]*msgInfo
	enums map[protoreflect.FullName]*enumInfo
}

func newBuilder() *builder {
	return &builder{msgs: map[protoreflect.FullName]*msgInfo{}, enums: map[protoreflect.FullName]*enumInfo{}}
}

func (b *builder) message(md protoreflect.MessageDescriptor) *msgInfo {
	if m, ok := b.msgs[md.FullName()]; ok {
		return m
	}
	m := &msgInfo{name: string(md.FullName()), uuid: md.FullName() == uuidName}
	b.msgs[md.FullName()] = m // before the fields: messages may nest themselves
	fds := md.Fields()
	m.fields = make([]fieldInfo, 0, fds.Len())
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := fieldInfo{num: fd.Number(), name: string(fd.Name()), kind: fd.Kind(), list: fd.IsList() || fd.IsMap()}
		switch fd.Kind() {
		case protoreflect.MessageKind, protoreflect.GroupKind:
			f.msg = b.message(fd.Message())
		case protoreflect.EnumKind:
			f.enum = b.enum(fd.Enum())
		}
		f.packed = f.list && !fd.IsMap() && scalarNumber(fd.Kind())
		m.fields = append(m.fields, f)
	}
	slices.SortFunc(m.fields, func(a, b fieldInfo) int { return int(a.num - b.num) })
	m.simple = len(m.fields) <= 64
	for _, f := range m.fields {
		if f.list {
			m.simple = false
		}
	}
	top := 0
	for _, f := range m.fields {
		if f.num < maxDenseFieldNumber {
			top = int(f.num) + 1
		}
	}
	if top > 0 && len(m.fields) < 127 {
		m.dense = make([]int8, top)
		for i, f := range m.fields {
			if f.num < protowire.Number(top) {
				m.dense[f.num] = int8(i + 1)
			}
		}
	}
	return m
}

func (b *builder) enum(ed protoreflect.EnumDescriptor) *enumInfo {
	if e, ok := b.enums[ed.FullName()]; ok {
		return e
	}
	e := &enumInfo{name: string(ed.FullName())}
	vs := ed.Values()
	for i := range vs.Len() {
		v := vs.Get(i)
		n := v.Number()
		if n >= 0 && n < 256 {
			for len(e.dense) <= int(n) {
				e.dense = append(e.dense, "")
			}
			if e.dense[n] == "" {
				e.dense[n] = string(v.Name())
			}
			continue
		}
		if e.other == nil {
			e.other = map[int32]string{}
		}
		if _, dup := e.other[int32(n)]; !dup {
			e.other[int32(n)] = string(v.Name())
		}
	}
	b.enums[ed.FullName()] = e
	return e
}

// scalarNumber reports whether a repeated field of kind k may be packed.
func scalarNumber(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind, protoreflect.GroupKind:
		return false
	}
	return true
}

// schemaSet is the set of messages used for the codes: one per code and
// role, the v1 alternative where v1 differs, and the name written in the
// schema field.
type schemaSet struct {
	raw           bool // Options.Raw: no schema
	req, resp     [numCodes]*msgInfo
	reqName       [numCodes]string // schema name per message ("v2" or the user's)
	respName      [numCodes]string
	reqV1, respV1 [numCodes]*msgInfo
	// quirk is the message of a type-13 reply to GetMioPatterns (16).
	quirk     *msgInfo
	quirkName string
	quirkV1   *msgInfo
	// missing lists the code messages a user schema lacks (built-in v2
	// messages are used for them).
	missing []string
}

// builtin holds the compiled v2 and v1 schemas, shared by all runs.
var builtin struct {
	once   sync.Once
	v2, v1 map[string]*msgInfo
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

// index builds msgInfo for every message of files (and their imports).
func index(files linker.Files) map[string]*msgInfo {
	b := newBuilder()
	out := map[string]*msgInfo{}
	var walk func(ms protoreflect.MessageDescriptors)
	walk = func(ms protoreflect.MessageDescriptors) {
		for i := range ms.Len() {
			md := ms.Get(i)
			if md.IsMapEntry() {
				continue
			}
			out[string(md.FullName())] = b.message(md)
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

func loadBuiltin() (v2, v1 map[string]*msgInfo, err error) {
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
func compileUser(opt Options) (map[string]*msgInfo, error) {
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
func find(msgs map[string]*msgInfo, full string) *msgInfo {
	if m, ok := msgs[full]; ok {
		return m
	}
	short := full[strings.LastIndexByte(full, '.')+1:]
	var found *msgInfo
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
	var user map[string]*msgInfo
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
	pick := func(full string) (m *msgInfo, name string, alt *msgInfo) {
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
	return s, nil
}
