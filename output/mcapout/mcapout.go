// Package mcapout writes records into an MCAP file (https://mcap.dev) that
// Foxglove and Lichtblick open with no code: JSON messages with JSON
// Schemas, zstd-compressed chunks, indexed, log time = capture time.
//
// # Topics
//
// Every record is a message on its record topic, as the object -o json
// writes (docs/output.md), so nothing is lost:
//
//	/PROTO/STREAM/TYPE                   most records
//	/PROTO/STREAM/SENDER/TYPE            records with a "sender" (VRPN), but
//	                                     not system messages (type_id < 0)
//	/PROTO/STREAM/SENDER/sensorN/TYPE    ... and a "sensor" (VRPN trackers)
//
// PROTO is "unknown" for events on a stream of unknown protocol. Names from
// the wire keep [A-Za-z0-9_.-] and have other bytes replaced by '_' (at
// most 64 bytes). A record topic's schema types "fields" from the
// protocol's documented fields (Options.Fields) and, for keys not
// documented, from its first record; a field that does not fit (another kind, a key the schema
// lacks, NaN or an infinity, an empty array or an array of arrays, which
// Foxglove's JSON datatypes cannot express) goes, with its key, into the
// message's "extra_json" string as a JSON object in the form of
// docs/output.md.
//
// Derived topics show the records as pictures; their first segment is
// never a protocol's, so they never meet a record topic:
//
//	/pose/vrpn/STREAM/SENDER/sensorN      foxglove.PoseInFrame, frame_id SENDER
//	/pose/deltarobot/STREAM/actuator      foxglove.PoseInFrame of actuator_position,
//	                                      frame_id deltarobot/STREAM
//	/scene/deltarobot/STREAM/curve        foxglove.SceneUpdate: the curve as a line strip
//	/tf                                   foxglove.FrameTransforms: world → SENDER
//	                                      (identity), SENDER → SENDER/sensorN (the
//	                                      pose), world → deltarobot/STREAM (identity)
//	/dissect/events                       foxglove.Log: gaps, skipped bytes, warnings,
//	                                      and pictures not drawn
//
// # Memory
//
// The library holds one chunk (Options.ChunkSize) and the file's indexes; at
// most Options.MaxTopics topics are made (a channel id is 16 bits), beyond
// which records go to /PROTO/_overflow and derived topics are not made;
// /dissect/events says so once.
package mcapout

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

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
	// Fields returns the documented fields of a protocol, from which the
	// schemas of its record topics are made (dissect.Registry.FieldsOf);
	// nil: from the first record of each topic alone.
	Fields func(proto string) []dissect.FieldInfo
}

// Writer writes records as MCAP. It is not safe for concurrent use.
type Writer struct {
	mw      *mcap.Writer
	closer  io.Closer
	o       Options
	enc     *output.JSON
	topics  map[topicKey]*channel
	byTopic map[string]*channel
	schemas map[string]uint16
	frames  map[string]bool // frames given a transform from world
	full    bool            // MaxTopics reached (told on /dissect/events)
	buf     []byte
	fit     []dissect.Field
	extra   []dissect.Field
	tfs     []transform
	points  []vec
	slab    []byte // numbers of the picture being drawn

	lastDeltaStream int
	lastDeltaFrame  string
	err             error
}

type topicKey struct {
	proto, sender, typ string
	stream, sensor     int
	kind               int // kindRecord, ...
}

const (
	kindRecord = iota
	kindPose
	kindCurve
	kindOverflow
)

type channel struct {
	id     uint16
	seq    uint32
	fields *node // record topics
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
	mw, err := mcap.NewWriter(w, &mcap.WriterOptions{
		Chunked: true, ChunkSize: o.ChunkSize, Compression: mcap.CompressionZSTD, CompressionLevel: mcap.CompressionLevelFastest, IncludeCRC: true,
	})
	if err != nil {
		return nil, err
	}
	if err := mw.WriteHeader(&mcap.Header{Library: o.Library}); err != nil {
		return nil, err
	}
	wr := &Writer{
		mw: mw, o: o, enc: output.NewJSONAppender(),
		topics: map[topicKey]*channel{}, byTopic: map[string]*channel{},
		schemas: map[string]uint16{}, frames: map[string]bool{},
	}
	if c, ok := w.(io.Closer); ok {
		wr.closer = c
	}
	return wr, nil
}

// Flush does nothing: a chunk is written when it is full, the rest by Close.
func (w *Writer) Flush() error { return w.err }

// Close writes what is left, the summary and the footer, and closes the
// underlying writer when it is a Closer.
func (w *Writer) Close() error {
	if w.mw == nil {
		return w.err
	}
	err := w.mw.Close()
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
// on its derived topic and /dissect/events.
func (w *Writer) Record(r *dissect.Record) error {
	if w.err != nil {
		return w.err
	}
	if w.mw == nil {
		return errors.New("mcap: record after Close")
	}
	w.err = w.record(r)
	if w.err == nil {
		w.err = w.events(r)
	}
	if w.err == nil {
		w.err = w.derived(r)
	}
	return w.err
}

func (w *Writer) record(r *dissect.Record) error {
	k := topicKey{proto: r.Proto, typ: r.Type, stream: r.Stream, sensor: -1}
	if s, ok := r.Fields.Get("sender"); ok && s.Kind() == dissect.KindString && !system(r) {
		k.sender = s.Str()
		if n, ok := r.Fields.Get("sensor"); ok && n.Kind() == dissect.KindInt {
			k.sensor = int(n.Int())
		}
	}
	c, err := w.recordChannel(k, r)
	if err != nil {
		return err
	}
	// Split the fields into those the schema holds and the others.
	w.fit, w.extra = w.fit[:0], w.extra[:0]
	for i := range r.Fields {
		f := &r.Fields[i]
		if p, ok := c.fields.props[f.Key]; ok && p.fits(&f.Value) && !w.seen(f.Key) {
			w.fit = append(w.fit, *f)
		} else {
			w.extra = append(w.extra, *f)
		}
	}
	rc := *r
	rc.Fields = w.fit
	rc.Raw = nil
	b := w.enc.AppendRecord(w.buf[:0], &rc)
	if len(w.extra) > 0 {
		ex := dissect.Object(w.extra)
		b = b[:len(b)-1]
		b = append(b, `,"extra_json":`...)
		js := w.enc.AppendValue(nil, &ex)
		b = output.AppendString(b, string(js))
		b = append(b, '}')
	}
	w.buf = b
	return w.write(c, r.Time, b)
}

// system says whether r is a system message (a negative "type_id": VRPN's
// descriptions, whose "sender" is the id described, not a device).
func system(r *dissect.Record) bool {
	v, ok := r.Fields.Get("type_id")
	return ok && v.Kind() == dissect.KindInt && v.Int() < 0
}

// seen says whether key is already among the fitting fields (a duplicate
// key, which the schema cannot hold twice).
func (w *Writer) seen(key string) bool {
	for i := range w.fit {
		if w.fit[i].Key == key {
			return true
		}
	}
	return false
}

func (w *Writer) recordChannel(k topicKey, r *dissect.Record) (*channel, error) {
	if c, ok := w.topics[k]; ok {
		return c, nil
	}
	proto := r.Proto
	if proto == "" {
		proto = "unknown"
	}
	topic := "/" + seg(proto) + "/" + fmt.Sprint(k.stream)
	if k.sender != "" {
		topic += "/" + seg(k.sender)
		if k.sensor >= 0 {
			topic += "/sensor" + fmt.Sprint(k.sensor)
		}
	}
	topic += "/" + seg(r.Type)
	if w.atLimit(r) {
		k = topicKey{proto: r.Proto, kind: kindOverflow}
		if c, ok := w.topics[k]; ok {
			return c, nil
		}
		topic = "/" + seg(proto) + "/_overflow"
	}
	if c, ok := w.byTopic[topic]; ok { // another key sanitised to the same name
		w.topics[k] = c
		return c, nil
	}
	var infos []dissect.FieldInfo
	if w.o.Fields != nil {
		infos = w.o.Fields(r.Proto)
	}
	fields := fieldsNode(infos, r.Type, r.Fields)
	name := "dissect." + seg(proto) + "." + seg(r.Type)
	c, err := w.channel(topic, name, string(recordSchema(name, fields)), map[string]string{"proto": r.Proto})
	if err != nil {
		return nil, err
	}
	c.fields = fields
	w.topics[k] = c
	return c, nil
}

// atLimit says whether the topics are at MaxTopics, and says it once on
// /dissect/events.
func (w *Writer) atLimit(r *dissect.Record) bool {
	if len(w.byTopic) < w.o.MaxTopics {
		return false
	}
	if !w.full {
		w.full = true
		msg := fmt.Sprintf("more than %d topics: records of further topics go to /PROTO/_overflow, and no further poses or curves are drawn", w.o.MaxTopics)
		if err := w.event(r.Time, levelWarning, msg); err != nil {
			w.err = err
		}
	}
	return true
}

// channel adds a JSON channel on topic with the named schema.
func (w *Writer) channel(topic, schema, data string, meta map[string]string) (*channel, error) {
	key := schema + "\x00" + data
	sid, ok := w.schemas[key]
	if !ok {
		sid = uint16(len(w.schemas) + 1)
		if err := w.mw.WriteSchema(&mcap.Schema{ID: sid, Name: schema, Encoding: "jsonschema", Data: []byte(data)}); err != nil {
			return nil, err
		}
		w.schemas[key] = sid
	}
	c := &channel{id: uint16(len(w.byTopic))}
	if err := w.mw.WriteChannel(&mcap.Channel{ID: c.id, SchemaID: sid, Topic: topic, MessageEncoding: "json", Metadata: meta}); err != nil {
		return nil, err
	}
	w.byTopic[topic] = c
	return c, nil
}

// fixed returns the channel of a topic with a fixed schema (/tf,
// /dissect/events), made on first use; these do not count against
// MaxTopics' overflow rule but are few.
func (w *Writer) fixed(topic, schema, data string) (*channel, error) {
	if c, ok := w.byTopic[topic]; ok {
		return c, nil
	}
	return w.channel(topic, schema, data, nil)
}

func (w *Writer) write(c *channel, t time.Time, data []byte) error {
	lt := logTime(t)
	err := w.mw.WriteMessage(&mcap.Message{ChannelID: c.id, Sequence: c.seq, LogTime: lt, PublishTime: lt, Data: data})
	c.seq++
	return err
}

// event writes one foxglove.Log on /dissect/events.
func (w *Writer) event(t time.Time, level int, msg string) error {
	c, err := w.fixed("/dissect/events", "foxglove.Log", schemaLog)
	if err != nil {
		return err
	}
	return w.write(c, t, appendLog(nil, t, level, msg))
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

// seg makes a name from the wire one segment of a topic name.
func seg(s string) string {
	if s == "" {
		return "_"
	}
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return r
		}
		return '_'
	}, s)
}
