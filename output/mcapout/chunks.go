package mcapout

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The chunks of the file are built here, not by the library's Writer:
// records are encoded straight into the chunk under construction (a
// message record's header, then the JSON appended in place, then its
// length patched), with the message index of the chunk kept beside it.
// A full chunk goes to a pool of compressing goroutines and, in the order
// the chunks were made, to a writer goroutine that hands the compressed
// chunk and its message indexes to mcap.Writer.WriteChunkWithIndexes: the
// library writes the chunk record, the message index records and keeps
// the chunk index for the summary, as it does for the chunks it makes
// itself. Schemas and channels are written at the start of the chunk
// that first uses them, as the library writes them, and given to the
// library (AddSchema, AddChannel) for the summary when the file is closed,
// with the statistics counted here.
//
// At most workers+1 chunks exist: the one being filled and workers in
// flight (compressing, waiting for the writer, or being written); a full
// chunk waits for one to be free. With one worker, or until the first
// chunk is full, a chunk is compressed and written in the caller's
// goroutine. close ends every goroutine.

// Compression names a chunk compression (the MCAP chunk record's).
const (
	CompressionLZ4  = "lz4"
	CompressionZstd = "zstd"
	// CompressionNone stores the chunks as they are (the chunk record's
	// compression is then "", as MCAP names it).
	CompressionNone = "none"
)

type chunk struct {
	data       []byte // the chunk's records, uncompressed
	out        []byte // compressed
	crc        uint32
	err        error
	idx        []*mcap.MessageIndex // by channel id
	list       []*mcap.MessageIndex // the non-empty ones, for the writer
	start, end uint64               // the least and greatest log time of its messages
	last       uint64               // the log time of the message begun last
	unsorted   bool                 // a message came before one of a later log time
	spare      []byte               // for sortMessages
	spans      []span               // for sortMessages
	messages   int
	done       chan struct{}
}

func (c *chunk) reset() {
	c.data = c.data[:0]
	c.err = nil
	for _, x := range c.idx {
		x.Reset()
	}
	c.start, c.end, c.last, c.unsorted, c.messages = math.MaxUint64, 0, 0, false, 0
}

type chunker struct {
	mw          *mcap.Writer
	compression string
	size        int
	workers     int

	cur     *chunk
	inline  compressor // the caller's, before the pool starts and with one worker
	started bool
	free    chan *chunk
	work    chan *chunk
	order   chan *chunk
	wg      sync.WaitGroup
	err     atomic.Pointer[error] // the first compression or write error

	counts   []uint64 // messages per channel id
	messages uint64
	begun    int // where the message begun last starts in cur.data (Emitter)
}

// The chunker is the Emitter of an MCAP file's Writer.

func (c *chunker) Schema(s *mcap.Schema)    { c.schema(s) }
func (c *chunker) Channel(ch *mcap.Channel) { c.channel(ch) }

// Begin starts a message record in the current chunk and returns the
// chunk's records, to which the message is appended.
func (c *chunker) Begin(ch uint16, seq uint32, t uint64) []byte {
	c.begun = c.begin(ch, seq, t)
	return c.cur.data
}

// End takes the chunk's records back with the message, completes its
// record and hands the chunk on when it is full.
func (c *chunker) End(b []byte) {
	c.cur.data = b
	c.end(c.begun)
}

// newChunker returns the chunker of mw; compression is one newCompressor
// knows.
func newChunker(mw *mcap.Writer, compression string, size, workers int) *chunker {
	c := &chunker{mw: mw, compression: compression, size: size, workers: max(workers, 1)}
	n := c.workers + 1
	c.free = make(chan *chunk, n)
	for range n {
		j := &chunk{done: make(chan struct{}, 1)}
		j.reset()
		c.free <- j
	}
	c.cur = <-c.free
	return c
}

func (c *chunker) failed() error {
	if e := c.err.Load(); e != nil {
		return *e
	}
	return nil
}

func (c *chunker) fail(err error) { c.err.CompareAndSwap(nil, &err) }

// begin starts a message record on channel ch in the current chunk and
// returns where it starts; the caller appends the message's data to
// c.cur.data and calls end.
func (c *chunker) begin(ch uint16, seq uint32, t uint64) int {
	j := c.cur
	start := len(j.data)
	for int(ch) >= len(j.idx) {
		j.idx = append(j.idx, &mcap.MessageIndex{ChannelID: uint16(len(j.idx))})
	}
	j.idx[ch].Add(t, uint64(start))
	j.unsorted = j.unsorted || t < j.last
	j.start, j.end, j.last = min(j.start, t), max(j.end, t), t
	j.messages++
	for int(ch) >= len(c.counts) {
		c.counts = append(c.counts, 0)
	}
	c.counts[ch]++
	c.messages++
	// The record's header: opcode, length (set by end), channel,
	// sequence, log time and publish time (the same).
	j.data = slices.Grow(j.data, messageHeader)
	h := j.data[start : start+messageHeader]
	h[0] = byte(mcap.OpMessage)
	binary.LittleEndian.PutUint16(h[9:], ch)
	binary.LittleEndian.PutUint32(h[11:], seq)
	binary.LittleEndian.PutUint64(h[15:], t)
	binary.LittleEndian.PutUint64(h[23:], t)
	j.data = j.data[:start+messageHeader]
	return start
}

// messageHeader is the size of a message record before its data.
const messageHeader = 1 + 8 + 2 + 4 + 8 + 8

// end completes the record begun at start, and hands the chunk on when
// it is full.
func (c *chunker) end(start int) {
	j := c.cur
	binary.LittleEndian.PutUint64(j.data[start+1:], uint64(len(j.data)-start-9))
	if len(j.data) > c.size {
		c.submit()
	}
}

// schema writes a schema record into the current chunk.
func (c *chunker) schema(s *mcap.Schema) {
	j := c.cur
	start := len(j.data)
	b := append(j.data, byte(mcap.OpSchema), 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint16(b, s.ID)
	b = appendString(b, s.Name)
	b = appendString(b, s.Encoding)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Data)))
	j.data = append(b, s.Data...)
	binary.LittleEndian.PutUint64(j.data[start+1:], uint64(len(j.data)-start-9))
}

// channel writes a channel record into the current chunk.
func (c *chunker) channel(ch *mcap.Channel) {
	j := c.cur
	start := len(j.data)
	b := append(j.data, byte(mcap.OpChannel), 0, 0, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint16(b, ch.ID)
	b = binary.LittleEndian.AppendUint16(b, ch.SchemaID)
	b = appendString(b, ch.Topic)
	b = appendString(b, ch.MessageEncoding)
	keys := make([]string, 0, len(ch.Metadata))
	n := 0
	for k, v := range ch.Metadata {
		keys = append(keys, k)
		n += 8 + len(k) + len(v)
	}
	sort.Strings(keys)
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for _, k := range keys {
		b = appendString(appendString(b, k), ch.Metadata[k])
	}
	j.data = b
	binary.LittleEndian.PutUint64(j.data[start+1:], uint64(len(j.data)-start-9))
}

func appendString(b []byte, s string) []byte {
	return append(binary.LittleEndian.AppendUint32(b, uint32(len(s))), s...)
}

// submit hands the current chunk on: to the pool, or compressed and
// written here with one worker.
func (c *chunker) submit() {
	j := c.cur
	if j.messages == 0 && len(j.data) == 0 {
		return
	}
	if c.workers == 1 {
		c.compressHere(j)
		c.writeOut(j)
		j.reset()
		return
	}
	if !c.started {
		c.start()
	}
	c.order <- j
	c.work <- j
	c.cur = <-c.free
	// A run that fills chunks fills more: the next is given its full
	// size at once rather than grown to it.
	if want := c.size + c.size/4; cap(c.cur.data) < want {
		c.cur.data = make([]byte, 0, want)
	}
}

func (c *chunker) compressHere(j *chunk) {
	if c.inline == nil {
		c.inline, _ = newCompressor(c.compression) // checked by New
	}
	compress(c.inline, j)
}

func (c *chunker) start() {
	c.started = true
	c.work = make(chan *chunk, cap(c.free))
	c.order = make(chan *chunk, cap(c.free))
	c.wg.Add(c.workers + 1)
	for range c.workers {
		z, _ := newCompressor(c.compression) // checked by New
		go c.worker(z)
	}
	go c.writer()
}

func (c *chunker) worker(z compressor) {
	defer c.wg.Done()
	for j := range c.work {
		compress(z, j)
		j.done <- struct{}{}
	}
}

func compress(z compressor, j *chunk) {
	if j.unsorted {
		j.sortMessages()
	}
	j.crc = crc32.ChecksumIEEE(j.data)
	j.out, j.err = z.compress(j.out[:0], j.data)
}

func (c *chunker) writer() {
	defer c.wg.Done()
	for j := range c.order {
		<-j.done
		c.writeOut(j)
		j.reset()
		c.free <- j
	}
}

// writeOut writes a compressed chunk and its message indexes, unless an
// error came before.
func (c *chunker) writeOut(j *chunk) {
	if j.err != nil {
		c.fail(fmt.Errorf("mcap: compressing a chunk: %w", j.err))
	}
	if c.failed() != nil {
		return
	}
	j.list = j.list[:0]
	for _, x := range j.idx {
		if !x.IsEmpty() {
			j.list = append(j.list, x)
		}
	}
	start, end := j.start, j.end
	if j.messages == 0 {
		start, end = 0, 0
	}
	err := c.mw.WriteChunkWithIndexes(&mcap.Chunk{
		MessageStartTime: start, MessageEndTime: end,
		UncompressedSize: uint64(len(j.data)), UncompressedCRC: j.crc,
		Compression: chunkCompression(c.compression), Records: j.out,
	}, j.list)
	if err != nil {
		c.fail(err)
	}
}

// close writes the last chunk, ends the goroutines and gives the library
// the statistics; it returns the first error.
func (c *chunker) close() error {
	if c.failed() == nil {
		if c.started {
			if c.cur.messages > 0 || len(c.cur.data) > 0 {
				c.order <- c.cur
				c.work <- c.cur
				c.cur = nil
			}
		} else {
			c.compressHere(c.cur)
			if c.cur.messages > 0 || len(c.cur.data) > 0 {
				c.writeOut(c.cur)
			}
		}
	}
	if c.started {
		close(c.work)
		close(c.order)
		c.wg.Wait()
		c.started = false
	}
	st := c.mw.Statistics
	st.MessageCount = c.messages
	for id, n := range c.counts {
		if n > 0 {
			st.ChannelMessageCounts[uint16(id)] = n
		}
	}
	return c.failed()
}

// chunkCompression is the chunk record's name of a compression: MCAP
// names no compression "".
func chunkCompression(name string) string {
	if name == CompressionNone {
		return ""
	}
	return name
}

// A compressor compresses a chunk's records, appending to dst.
type compressor interface {
	compress(dst, src []byte) ([]byte, error)
}

func newCompressor(name string) (compressor, error) {
	switch name {
	case CompressionZstd:
		// zstd's fastest level; without the frame's checksum (the chunk
		// record has a CRC of its records) and with the literals stored
		// as they are, not Huffman-coded: a chunk's literals are mostly
		// numbers' bytes, which that coding hardly shrinks. On the
		// generated 50 MB capture the chunks are then 4% larger (36.9
		// MB against 35.5) for a fifth less of zstd's CPU
		// (docs/performance-35-cpu.md).
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithNoEntropyCompression(true))
		if err != nil {
			return nil, err
		}
		return zstdCompressor{e}, nil
	case CompressionLZ4:
		return &lz4Compressor{}, nil
	case CompressionNone:
		return noCompressor{}, nil
	}
	return nil, fmt.Errorf("mcap: compression %q: want %s, %s or %s", name, CompressionLZ4, CompressionZstd, CompressionNone)
}

// noCompressor stores a chunk's records as they are.
type noCompressor struct{}

func (noCompressor) compress(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }

type zstdCompressor struct{ e *zstd.Encoder }

func (z zstdCompressor) compress(dst, src []byte) ([]byte, error) {
	return z.e.EncodeAll(src, dst), nil
}

// lz4Compressor writes an LZ4 frame (https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md),
// the form MCAP's "lz4" chunks have, with lz4's fast block compressor: a
// frame header, blocks of at most 4 MiB (each compressed, or stored when
// it does not shrink), the end mark. The blocks are compressed straight
// from the chunk into dst, which lz4.Writer would first copy into a
// block buffer of its own. No content checksum: the chunk record has a
// CRC of its records.
type lz4Compressor struct{ c lz4.Compressor }

// lz4Header is the frame's header: magic 0x184D2204; FLG 0x60 (version
// 01, blocks independent, no block or content checksum, no content size,
// no dictionary); BD 0x70 (blocks of at most 4 MiB); and the header
// checksum, the second byte of the XXH32 of FLG and BD, 0x73.
var lz4Header = [7]byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x70, 0x73}

const lz4Block = 4 << 20

func (z *lz4Compressor) compress(dst, src []byte) ([]byte, error) {
	dst = append(dst, lz4Header[:]...)
	for len(src) > 0 {
		blk := src[:min(len(src), lz4Block)]
		src = src[len(blk):]
		at := len(dst)
		dst = slices.Grow(dst, 4+len(blk))[:at+4+len(blk)]
		// Room for the block as it is: a block that would not fit
		// there is stored.
		n, err := z.c.CompressBlock(blk, dst[at+4:])
		if n == 0 || err != nil {
			copy(dst[at+4:], blk)
			binary.LittleEndian.PutUint32(dst[at:], uint32(len(blk))|1<<31)
			continue
		}
		dst = dst[:at+4+n]
		binary.LittleEndian.PutUint32(dst[at:], uint32(n))
	}
	return append(dst, 0, 0, 0, 0), nil
}

// A span is a record of a chunk: where it starts and ends in its data,
// and a message's log time.
type span struct {
	start, end int
	t          uint64
	message    bool
}

// sortMessages puts the chunk's messages in log-time order (those of the
// same log time in the order they came), after its schema and channel
// records, and makes its message indexes again: so that a reader going
// through the file finds its messages in time order (the mcap CLI's
// doctor asks for it), where the pipeline gave a record after records of
// later times (another stream's, docs/output.md; a logged message of time
// 0 among others). Only the chunk's own messages are ordered: a record later than
// a whole chunk stays in the chunk it came in.
func (j *chunk) sortMessages() {
	j.spans = j.spans[:0]
	for at := 0; at+9 <= len(j.data); {
		end := at + 9 + int(binary.LittleEndian.Uint64(j.data[at+1:]))
		sp := span{start: at, end: end}
		if j.data[at] == byte(mcap.OpMessage) {
			sp.message, sp.t = true, binary.LittleEndian.Uint64(j.data[at+15:])
		}
		j.spans = append(j.spans, sp)
		at = end
	}
	slices.SortStableFunc(j.spans, func(a, b span) int {
		switch {
		case a.message != b.message && !a.message:
			return -1
		case a.message != b.message:
			return 1
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return 0
	})
	for _, x := range j.idx {
		x.Reset()
	}
	out := j.spare[:0]
	for _, sp := range j.spans {
		if sp.message {
			ch := binary.LittleEndian.Uint16(j.data[sp.start+9:])
			j.idx[ch].Add(sp.t, uint64(len(out)))
		}
		out = append(out, j.data[sp.start:sp.end]...)
	}
	j.data, j.spare = out, j.data
	j.unsorted = false
}
