// Package mcapout writes records into an MCAP file (https://mcap.dev) that
// Foxglove and Lichtblick open with no code: protobuf messages with their
// FileDescriptorSets made from the declarations (protoschema.go, foxpb.go),
// or JSON messages with JSON Schemas (Options.Encoding), zstd-compressed chunks (lz4 as an option: Options.Compression),
// indexed, log time = capture time. What
// a record's topic, schema and pictures are comes from its type's
// declaration (Options.Decl, dissect.TypeDecl) and the roles it gives
// fields; no protocol is named here.
//
// # Topics
//
// Every record is a message on its record topic: the object -o json
// writes (docs/output.md), whole, without the raw bytes:
//
//	/PROTO/STREAM/TABLE                  most records
//	/PROTO/STREAM/SENDER/TABLE           records of a type with a sender field
//	                                     (dissect.RoleSender)
//	/PROTO/STREAM/SENDER/sensorN/TABLE   ... and a sensor field (dissect.RoleSensor)
//
// TABLE is the declaration's table (dissect.TypeDecl.Table): the record's
// type, or TYPE.VALUE for a variant of a type; the record's type for a
// protocol's "*" declaration. PROTO is "unknown" for events on a stream of
// unknown protocol. Names from the wire keep [A-Za-z0-9_.-] and have other
// bytes replaced by '_' (at most 64 bytes); a topic whose name a channel of
// another schema already has is named TOPIC~2 (~3, ...).
//
// Each declaration has one schema, dissect.PROTO.TABLE (dissect.gap and
// dissect.skipped for the events every protocol shares), shared by the
// topics of its records: the record's JSON Schema in the form from which
// Foxglove and Lichtblick make datatypes (dissect.AppendFoxgloveRecordSchema),
// so every message validates against its channel's schema and the Plot
// panel reads every field. A record without a declaration (a protocol's
// bug) is written whole all the same on a channel of schema
// dissect.undeclared, whose fields are any object; /dissect/events says so
// once per topic and [Writer.Undeclared] counts them.
//
// Derived topics show the records as pictures, from the roles of their
// declarations; their first segment is never a protocol's, so they never
// meet a record topic:
//
//	/pose/PROTO/STREAM[/SENDER[/sensorN]][/NAME]
//	                         foxglove.PoseInFrame of each record of a type
//	                         with a Pose (NAME its Name), in the frame SENDER,
//	                         or PROTO/STREAM when the type has no sender
//	/scene/PROTO/STREAM[/SENDER]/TABLE
//	                         foxglove.SceneUpdate: a type's Polyline as a
//	                         line strip, in the same frames
//	/tf                      foxglove.FrameTransforms: world → each frame
//	                         (identity, once), SENDER → SENDER/sensorN (the pose)
//	/dissect/events          foxglove.Log: gaps, skipped bytes, warnings,
//	                         pictures not drawn, records without a declaration
//
// # Memory
//
// The writer holds at most Options.Workers+1 chunks (Options.ChunkSize
// each, uncompressed, and compressed: the one being filled and those
// being compressed or written, see chunks.go) and the file's indexes; at
// most Options.MaxTopics topics and twice as many channels are made (a
// channel id is 16 bits), beyond
// which records go to /PROTO/_overflow (schema dissect.undeclared) and
// derived topics are not made; /dissect/events says so once.
//
// Names from the wire (types, senders) are kept by the writer to find a
// record's topic again. Each is kept to at most [maxKept] bytes: a longer
// one is cut (at a character) and given "~" and 16 hex digits of its
// SHA-256, which is then also the name of its frame; topics use 64 bytes
// of it anyway. Many names may share a topic (names alike in their first
// 64 bytes, or once sanitised): at most 4 × MaxTopics names are
// remembered, later ones are looked up afresh for each record, and at most
// MaxTopics frames are remembered as given a transform from world, later
// ones are given one with each picture.
package mcapout

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unsafe"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/output"
	"github.com/foxglove/mcap/go/mcap"
)

// Options configures a [Writer]. The zero value is usable.
type Options struct {
	// Library names the writer in the file's header ("dissect v1.2.3").
	Library string
	// ChunkSize is the uncompressed size of a chunk (default 4 MiB).
	ChunkSize int64
	// MaxTopics bounds the topics (default 4096).
	MaxTopics int
	// Compression is the chunks' compression: CompressionZstd (the
	// default: the file 0.74× lz4's on the generated 50 MB capture, in
	// about the same wall time on 2 cores: docs/mcap.md), CompressionLZ4
	// or CompressionNone.
	Compression string
	// Workers is the number of goroutines compressing chunks while the
	// records of the next are encoded (default 2); 1 compresses them in
	// the caller's goroutine. At most Workers chunks are in flight.
	Workers int
	// Decl returns the declaration of a record (dissect.Registry.Decl),
	// which gives its record topic's schema, its sender and sensor, and
	// its pictures; nil, or a nil result, leaves a record undeclared:
	// written whole, its fields untyped, and counted ([Writer.Undeclared]).
	// A declaration without a Variant it returns is taken to be that of
	// every record of the same Proto and Type, as dissect.Registry.Decl
	// gives them, and is not asked for again.
	Decl func(*dissect.Record) *dissect.TypeDecl
	// Encoding is the encoding of the record topics' messages:
	// EncodingProtobuf (the default; a message type per declaration, see
	// protoschema.go) or EncodingJSON (the record's -o json object, with a
	// JSON Schema). Records without a declaration are JSON either way.
	Encoding string
	// PoseInterval is the least capture time between two poses drawn on
	// a pose topic (when 0: DefaultPoseInterval in a file, every record's
	// for NewEmitter); negative draws a pose for every record.
	PoseInterval time.Duration
}

// DefaultPoseInterval is the default Options.PoseInterval: at most 100
// poses a second on a topic, more than a 3D panel shows; the record
// topics keep every record. A pose message per record of a 1 kHz stream
// made a third of a file's messages, and each message costs 16 bytes of
// index whatever its size (docs/performance-35-encodings.md).
const DefaultPoseInterval = 10 * time.Millisecond

// Writer writes records as MCAP. It is not safe for concurrent use.
type Writer struct {
	mw         *mcap.Writer
	ch         *chunker // the file's chunks; nil for a Writer of NewEmitter
	out        Emitter  // ch, or what NewEmitter was given
	closed     bool
	schemaList []*mcap.Schema  // for the summary, in order of id
	chanList   []*mcap.Channel // for the summary, in order of id
	closer     io.Closer
	o          Options
	enc        *output.JSON
	topics     map[topicKey]*channel
	byTopic    map[string][]*channel // a topic's channels, which have one schema
	names      bool                  // the record channels state src and dst (channelKeys)
	schemas    map[string]uint16     // the schemas known by name (Foxglove's, undeclared)
	nschemas   uint16
	decls      map[*dissect.TypeDecl]*declared
	frames     map[string]bool // frames given a transform from world
	full       bool            // MaxTopics reached (told on /dissect/events)
	undeclared int
	tfs        []transform
	points     []vec
	slab       []byte // numbers of the picture being drawn

	recent [64]struct { // see known
		k topicKey
		c *channel
	}
	rootedLast string // the frame rooted last (see rooted)

	memos [64]memo // see Record

	lastDecl [16]struct { // see declared
		proto, typ string
		d          *declared
	}

	streamFrame frameName // PROTO/STREAM of the last picture without a sender
	err         error
}

type topicKey struct {
	decl               *dissect.TypeDecl
	proto, sender, typ string
	stream             int
	sensor             int64
	kind               int    // kindRecord, ...
	src, dst           string // a record channel's, when it states them (Writer.names)
}

const (
	kindRecord = iota
	kindPose
	kindLine
	kindOverflow
)

type channel struct {
	id       uint16
	schema   uint16
	stated   string // its metadata "envelope" (protobuf record channels)
	seq      uint32
	posed    bool   // a pose topic's: a pose was drawn, at lastPose
	lastPose uint64 // (its log time; see Options.PoseInterval)
}

// New returns a writer of an MCAP file on w. Close writes the file's
// summary and footer and closes w if it is an io.Closer.
func New(w io.Writer, o Options) (*Writer, error) {
	if o.ChunkSize <= 0 {
		o.ChunkSize = 4 << 20
	}
	if o.MaxTopics <= 0 || o.MaxTopics > 60000 {
		o.MaxTopics = 4096
	}
	if o.Compression == "" {
		o.Compression = CompressionZstd
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if _, err := newCompressor(o.Compression); err != nil {
		return nil, err // before a byte is written
	}
	if err := checkEncoding(o.Encoding); err != nil {
		return nil, err
	}
	// The library writes the header, the chunks made here
	// (WriteChunkWithIndexes) and, at Close, the summary and footer.
	mw, err := mcap.NewWriter(w, &mcap.WriterOptions{IncludeCRC: true})
	if err != nil {
		return nil, err
	}
	ch := newChunker(mw, o.Compression, int(o.ChunkSize), o.Workers)
	if err := mw.WriteHeader(&mcap.Header{Library: o.Library}); err != nil {
		return nil, err
	}
	wr := newWriter(ch, o)
	wr.mw, wr.ch = mw, ch
	wr.names = wr.o.Encoding == EncodingProtobuf
	if c, ok := w.(io.Closer); ok {
		wr.closer = c
	}
	return wr, nil
}

// An Emitter takes the schemas, channels and messages a Writer makes, in
// the order it makes them: a schema before the first channel that has it,
// a channel before its first message. The MCAP file's chunks are one
// (New); a live server (output/foxws) is another (NewEmitter).
type Emitter interface {
	// Schema is a new schema (encoding "protobuf" or "jsonschema"); its
	// ID is new.
	Schema(s *mcap.Schema)
	// Channel is a new channel (message encoding "protobuf" or "json") of
	// a schema given before; its ID is new.
	Channel(c *mcap.Channel)
	// Begin starts a message of channel ch, its sequence number seq and
	// log time (nanoseconds since 1970): it returns a buffer to which the
	// Writer appends the message and which it then gives to End.
	Begin(ch uint16, seq uint32, logTime uint64) []byte
	// End completes the message begun last; b is Begin's buffer with the
	// message appended.
	End(b []byte)
}

// NewEmitter returns a Writer that gives what it makes (the same topics,
// schemas and messages as the MCAP file of New, in the same order) to e
// instead of a file, but for the poses: every record's is drawn unless
// Options.PoseInterval says otherwise (a viewer takes only the topics
// it subscribes to; a file pays 16 bytes of index per message).
// Options.Compression, ChunkSize, Workers and Library are not used. Close
// does nothing more than stop the Writer.
func NewEmitter(e Emitter, o Options) *Writer {
	if o.MaxTopics <= 0 || o.MaxTopics > 60000 {
		o.MaxTopics = 4096
	}
	if o.PoseInterval == 0 {
		o.PoseInterval = -1
	}
	return newWriter(e, o)
}

func newWriter(e Emitter, o Options) *Writer {
	if o.Encoding == "" {
		o.Encoding = EncodingProtobuf
	}
	if o.PoseInterval == 0 {
		o.PoseInterval = DefaultPoseInterval
	}
	return &Writer{
		out: e, o: o, enc: output.NewJSONAppender(),
		topics: map[topicKey]*channel{}, byTopic: map[string][]*channel{},
		schemas: map[string]uint16{}, decls: map[*dissect.TypeDecl]*declared{}, frames: map[string]bool{},
	}
}

// Flush writes nothing: a chunk is written when it is full, the rest by
// Close. It returns the first error, also one met writing a chunk.
func (w *Writer) Flush() error {
	if w.err == nil && !w.closed && w.ch != nil {
		w.err = w.ch.failed()
	}
	return w.err
}

// Undeclared returns the number of records written so far that had no
// declaration.
func (w *Writer) Undeclared() int { return w.undeclared }

// Close writes what is left, the summary and the footer, and closes the
// underlying writer when it is a Closer. It ends the goroutines the
// writer started.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.ch == nil {
		return w.err
	}
	err := w.ch.close()
	if err == nil {
		for _, s := range w.schemaList {
			w.mw.AddSchema(s)
		}
		for _, c := range w.chanList {
			w.mw.AddChannel(c)
		}
		err = w.mw.Close()
	}
	w.mw = nil
	if w.closer != nil {
		if cerr := w.closer.Close(); err == nil {
			err = cerr
		}
	}
	if w.err == nil {
		w.err = err
	}
	return err
}

// Record writes r on its record topic and, for the records that have one,
// on its derived topics and /dissect/events.
func (w *Writer) Record(r *dissect.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("mcap: record after Close")
	}
	if w.ch != nil {
		if w.err = w.ch.failed(); w.err != nil {
			return w.err
		}
	}
	m, found := w.memo(r)
	var (
		d *declared
		k topicKey
		c *channel
	)
	if found {
		d, k, c = m.d, m.k, m.c
	} else {
		d = w.declared(r)
		k = w.recordKey(r, d)
		if c, w.err = w.recordChannel(r, d, k); w.err != nil {
			return w.err
		}
		if d != nil && d.decl.Variant == nil && d.sender == "" {
			// The topic of every record of r's protocol, type and
			// stream (Options.Decl): found again at once.
			*m = memo{proto: r.Proto, typ: r.Type, src: r.Src, dst: r.Dst, stream: r.Stream, d: d, k: k, c: c}
		} else {
			m = nil
		}
	}
	w.record(r, d, c)
	w.err = w.events(r)
	if w.err == nil && d != nil {
		w.err = w.derived(r, d, k, m)
	}
	return w.err
}

// A memo is what a record's protocol, type, stream and direction led to
// when they alone do (declared, recordKey): its declaration, record topic
// key and channel, and its pose topic's channel once drawn.
type memo struct {
	proto, typ string
	src, dst   string
	stream     int
	d          *declared
	k          topicKey
	c, pose    *channel
}

// memo returns the slot of r's protocol, type, stream and direction
// among the memos, and whether it holds theirs.
func (w *Writer) memo(r *dissect.Record) (*memo, bool) {
	h := uintptr(unsafe.Pointer(unsafe.StringData(r.Type)))>>3 ^ uintptr(len(r.Type)) ^ uintptr(r.Stream)*0x9e37 ^
		uintptr(unsafe.Pointer(unsafe.StringData(r.Src)))>>3
	m := &w.memos[h%uintptr(len(w.memos))]
	return m, m.c != nil && m.stream == r.Stream && same(m.typ, r.Type) && same(m.proto, r.Proto) &&
		same(m.src, r.Src) && same(m.dst, r.Dst)
}

// recordKey returns the key of r's record topic's channel: its
// declaration, stream and type, the sender and sensor its fields of those
// roles name, and its direction when the channel states it.
func (w *Writer) recordKey(r *dissect.Record, d *declared) topicKey {
	k := topicKey{proto: r.Proto, typ: kept(r.Type), stream: r.Stream, sensor: -1}
	if d == nil {
		return k
	}
	k.decl = d.decl
	if w.names {
		k.src, k.dst = r.Src, r.Dst
	}
	if d.sender == "" {
		return k
	}
	if s, ok := r.Fields.Get(d.sender); ok && s.Kind() == dissect.KindString && s.Str() != "" {
		k.sender = kept(s.Str())
		if d.sensor != "" {
			n, ok := r.Fields.Get(d.sensor)
			switch {
			case !ok:
			case n.Kind() == dissect.KindInt:
				k.sensor = n.Int()
			case n.Kind() == dissect.KindUint && n.Uint() < 1<<62:
				k.sensor = int64(n.Uint())
			}
		}
	}
	return k
}

// record writes r, whole, as -o json writes it (without raw bytes), on
// its record topic's channel c.
func (w *Writer) record(r *dissect.Record, d *declared, c *channel) {
	if d == nil {
		w.undeclared++
	}
	b := w.begin(c, r.Time)
	if d != nil && d.pb != nil {
		w.out.End(appendPBRecord(b, r, d.pb))
		return
	}
	rc := *r
	rc.Raw = nil
	w.out.End(w.enc.AppendRecord(b, &rc))
}

// recordChannel returns the channel of r's record topic, made on first
// use:
//
//	/PROTO/STREAM[/SENDER[/sensorN]]/TABLE
//
// TABLE the declaration's table (the record's type, or TYPE.VALUE for a
// variant; the type itself for a protocol's "*" declaration and a record
// without one).
func (w *Writer) recordChannel(r *dissect.Record, d *declared, k topicKey) (*channel, error) {
	if c := w.known(k); c != nil {
		return c, nil
	}
	proto := r.Proto
	if proto == "" {
		proto = "unknown"
	}
	topic := "/" + seg(proto) + "/" + fmt.Sprint(k.stream) + senderPath(k)
	if d != nil && d.decl.Type != "*" {
		topic += "/" + seg(d.decl.Table())
	} else {
		topic += "/" + seg(r.Type)
	}
	if w.atLimit(r) {
		k = topicKey{proto: r.Proto, kind: kindOverflow}
		if c, ok := w.topics[k]; ok {
			return c, nil
		}
		topic = "/" + seg(proto) + "/_overflow"
		d = nil // records of every type share it
	}
	sid, err := w.recordSchema(r, d)
	if err != nil {
		return nil, err
	}
	enc, meta := EncodingJSON, map[string]string{"proto": r.Proto}
	if d != nil && d.pb != nil {
		enc, meta["envelope"] = EncodingProtobuf, w.statedEnvelope(r, channelKeys(d.decl, w.names))
	}
	c, topic := w.free(topic, sid, meta["envelope"])
	if c == nil {
		c, err = w.channel(topic, sid, enc, meta)
		if err != nil {
			return nil, err
		}
		if d == nil && k.kind != kindOverflow {
			err = w.undeclaredTopic(r, topic)
		}
	}
	w.remember(k, c)
	return c, err
}

// remember caches the channel of k, unless the cache is full.
func (w *Writer) remember(k topicKey, c *channel) {
	if len(w.topics) < 4*w.o.MaxTopics {
		w.topics[k] = c
	}
}

// known returns the channel remembered for k, or nil. A few recent keys
// are found without hashing their strings: a slot chosen by the key's
// declaration, stream, sensor and kind holds the last key found there.
func (w *Writer) known(k topicKey) *channel {
	h := uintptr(unsafe.Pointer(k.decl))>>4 ^ uintptr(k.stream)*0x9e37 ^ uintptr(k.sensor)*0x85eb ^ uintptr(k.kind)*0xc2b3 ^ uintptr(len(k.sender)) ^
		uintptr(unsafe.Pointer(unsafe.StringData(k.src)))>>3
	slot := &w.recent[h%uintptr(len(w.recent))]
	if slot.c != nil && slot.k == k {
		return slot.c
	}
	c, ok := w.topics[k]
	if !ok {
		return nil
	}
	slot.k, slot.c = k, c
	return c
}

// free returns the channel of topic that has the schema sid and states
// the envelope stated (another key sanitised to the same name), else the
// name of a new channel: topic when its channels have the schema sid or
// it has none, or else topic~2, topic~3, ... (a channel's messages always
// have its topic's schema).
func (w *Writer) free(topic string, sid uint16, stated string) (*channel, string) {
	name := topic
	for n := 2; ; n++ {
		cs := w.byTopic[name]
		if len(cs) == 0 {
			return nil, name
		}
		if cs[0].schema == sid {
			for _, c := range cs {
				if c.stated == stated {
					return c, name
				}
			}
			return nil, name
		}
		name = topic + "~" + strconv.Itoa(n)
	}
}

// atLimit says whether the topics are at MaxTopics or their channels at
// maxChannels (a record topic has a channel per direction in a file:
// channelKeys), and says it once on /dissect/events.
func (w *Writer) atLimit(r *dissect.Record) bool {
	if len(w.byTopic) < w.o.MaxTopics && len(w.chanList) < w.maxChannels() {
		return false
	}
	if !w.full {
		w.full = true
		msg := fmt.Sprintf("more than %d topics or %d channels: records of further topics go to /PROTO/_overflow, and no further poses or lines are drawn", w.o.MaxTopics, w.maxChannels())
		if err := w.event(r.Time, levelWarning, msg); err != nil {
			w.err = err
		}
	}
	return true
}

// maxChannels bounds the channels that atLimit lets be made: twice
// MaxTopics, and below the 16 bits of a channel id with room for the
// fixed topics.
func (w *Writer) maxChannels() int { return min(2*w.o.MaxTopics, 65000) }

// newSchema writes a schema, of encoding "jsonschema" or "protobuf", and
// returns its id.
func (w *Writer) newSchema(name, encoding string, data []byte) (uint16, error) {
	w.nschemas++
	id := w.nschemas
	s := &mcap.Schema{ID: id, Name: name, Encoding: encoding, Data: data}
	w.out.Schema(s)
	w.schemaList = append(w.schemaList, s)
	return id, nil
}

// channel adds a channel of messages of encoding enc on topic with the
// schema sid.
func (w *Writer) channel(topic string, sid uint16, enc string, meta map[string]string) (*channel, error) {
	c := &channel{id: uint16(len(w.chanList)), schema: sid, stated: meta["envelope"]}
	mc := &mcap.Channel{ID: c.id, SchemaID: sid, Topic: topic, MessageEncoding: enc, Metadata: meta}
	w.out.Channel(mc)
	w.chanList = append(w.chanList, mc)
	w.byTopic[topic] = append(w.byTopic[topic], c)
	return c, nil
}

// fixed returns the channel of a topic with a fixed Foxglove schema (/tf,
// /dissect/events), made on first use; these do not count against
// MaxTopics' overflow rule but are few.
func (w *Writer) fixed(topic, schema string) (*channel, error) {
	if cs := w.byTopic[topic]; len(cs) > 0 {
		return cs[0], nil
	}
	sid, err := w.foxgloveSchema(schema)
	if err != nil {
		return nil, err
	}
	return w.channel(topic, sid, w.derivedEncoding(), nil)
}

// begin starts a message on c: its data is appended to the buffer
// returned, which w.out.End then takes.
func (w *Writer) begin(c *channel, t time.Time) []byte {
	b := w.out.Begin(c.id, c.seq, logTime(t))
	c.seq++
	return b
}

// event writes one foxglove.Log on /dissect/events.
func (w *Writer) event(t time.Time, level int, msg string) error {
	c, err := w.fixed("/dissect/events", "foxglove.Log")
	if err != nil {
		return err
	}
	if w.pbDerived() {
		w.out.End(appendPBLog(w.begin(c, t), t, level, msg))
		return nil
	}
	w.out.End(appendLog(w.begin(c, t), t, level, msg))
	return nil
}

// events tells of gaps, skipped bytes and warnings on /dissect/events.
func (w *Writer) events(r *dissect.Record) error {
	if r.Type != dissect.TypeGap && r.Type != dissect.TypeSkipped && len(r.Warnings) == 0 {
		return nil
	}
	where := fmt.Sprintf("%s stream %d, %s → %s, offset %d", r.Transport, r.Stream, r.Src, r.Dst, r.Offset)
	proto := r.Proto
	if proto == "" {
		proto = "unknown protocol"
	}
	switch r.Type {
	case dissect.TypeGap:
		if err := w.event(r.Time, levelWarning, fmt.Sprintf("gap: %d bytes never captured (%s, %s)", r.Length, proto, where)); err != nil {
			return err
		}
	case dissect.TypeSkipped:
		msg := fmt.Sprintf("skipped: %d bytes not decoded (%s, %s)", r.Length, proto, where)
		if v, ok := r.Fields.Get("reason"); ok && v.Kind() == dissect.KindString {
			msg += ": " + v.Str()
		}
		if err := w.event(r.Time, levelWarning, msg); err != nil {
			return err
		}
	}
	for _, warn := range r.Warnings {
		if err := w.event(r.Time, levelWarning, fmt.Sprintf("%s %s (%s): %s", proto, r.Type, where, warn)); err != nil {
			return err
		}
	}
	return nil
}
