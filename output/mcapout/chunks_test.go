package mcapout

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/internal/leakcheck"
	"github.com/dissect-tools/dissect/internal/mcapcheck"
	"github.com/foxglove/mcap/go/mcap"
	"github.com/pierrec/lz4/v4"
)

// many returns n records of three kinds, a millisecond apart: a type with
// a pose (a record and a pose message each), one with a sender and sensor
// (a record, a pose and a transform each) and a plain one (a record). The
// first pose of the first kind adds a transform, world → p/0: n + 2n/3 +
// n/3 + 1 messages in all for n a multiple of 3.
func many(n int) []*dissect.Record {
	var out []*dissect.Record
	for i := range n {
		var r *dissect.Record
		switch i % 3 {
		case 0:
			r = rec("p", "arm", 0, f("x", dissect.Float32(float32(i)/7)), f("y", dissect.Float32(-0.5)), f("z", dissect.Float32(0.25)), f("u", dissect.Float32(0)))
		case 1:
			r = rec("p", "tracker", 1, f("sender", dissect.Str("T")), f("sensor", dissect.Int(int64(i%2))),
				f("pos", floats(float64(i), 2, 3)), f("quat", quat(0, 0, 0, 1)))
		default:
			r = rec("p", "plain", 2, f("n", dissect.Uint(uint64(i))), f("v", dissect.Float(float64(i)/3)))
		}
		r.Time = t0.Add(time.Duration(i) * time.Millisecond)
		out = append(out, r)
	}
	return out
}

// encode writes recs with o into memory.
func encode(t testing.TB, o Options, recs []*dissect.Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Chunks compressed on worker goroutines make the very file one
// goroutine makes, for each compression; with small chunks (many of
// them) the file holds what one big chunk holds, in the same order, the
// records as -o json writes them, and its indexes and statistics agree
// with what is read.
func TestChunksOnWorkers(t *testing.T) {
	recs := many(3000)
	reg := registry(t)
	one, _ := readBack(t, encode(t, Options{Decl: reg.Decl, Workers: 1, ChunkSize: 64 << 20, Encoding: EncodingJSON, PoseInterval: -1}, recs))
	if len(one) != 6001 {
		t.Fatalf("%d messages for %d records", len(one), len(recs))
	}
	var got []msg
	for _, m := range one {
		if strings.HasPrefix(m.schema, "dissect.p.") {
			got = append(got, m)
		}
	}
	if len(got) != len(recs) {
		t.Fatalf("%d record messages, want %d", len(got), len(recs))
	}
	for i, m := range got {
		if m.data != jsonOf(recs[i]) || m.logTime != uint64(recs[i].Time.UnixNano()) {
			t.Fatalf("record %d: %s at %d, want %s", i, m.data, m.logTime, jsonOf(recs[i]))
		}
	}
	for _, comp := range []string{CompressionLZ4, CompressionZstd, CompressionNone} {
		var files [][]byte
		for _, workers := range []int{1, 2, 5} {
			raw := encode(t, Options{Decl: reg.Decl, Workers: workers, ChunkSize: 4096, Compression: comp, Encoding: EncodingJSON, PoseInterval: -1}, recs)
			files = append(files, raw)
			if !bytes.Equal(raw, files[0]) {
				t.Errorf("%s: %d workers write another file than 1 (%d bytes, %d)", comp, workers, len(raw), len(files[0]))
			}
		}
		msgs, _ := readBack(t, files[0])
		if !reflect.DeepEqual(msgs, one) {
			t.Errorf("%s: the messages of small chunks differ from those of one chunk", comp)
		}
		checkIndexes(t, comp, files[0], len(one))
	}
}

// recordCompression is the chunk record's compression of each option:
// MCAP names stored chunks "" (the specification's Chunk record).
var recordCompression = map[string]string{CompressionLZ4: "lz4", CompressionZstd: "zstd", CompressionNone: ""}

// checkIndexes reads raw through its summary and message indexes, in
// log-time order: every message is found, in a chunk of compression comp
// whose time range holds it, and the statistics count them.
func checkIndexes(t *testing.T, comp string, raw []byte, want int) {
	t.Helper()
	rd, err := mcap.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	info, err := rd.Info()
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ChunkIndexes) < 10 || info.Statistics.ChunkCount != uint32(len(info.ChunkIndexes)) {
		t.Errorf("%s: %d chunk indexes, statistics %d chunks", comp, len(info.ChunkIndexes), info.Statistics.ChunkCount)
	}
	var perChannel uint64
	for _, n := range info.Statistics.ChannelMessageCounts {
		perChannel += n
	}
	if info.Statistics.MessageCount != uint64(want) || perChannel != uint64(want) {
		t.Errorf("%s: statistics %d messages (%d by channel), want %d", comp, info.Statistics.MessageCount, perChannel, want)
	}
	if info.Statistics.ChannelCount != uint32(len(info.Channels)) || info.Statistics.SchemaCount != uint16(len(info.Schemas)) {
		t.Errorf("%s: statistics %d channels, %d schemas; summary %d, %d", comp, info.Statistics.ChannelCount, info.Statistics.SchemaCount, len(info.Channels), len(info.Schemas))
	}
	for _, ci := range info.ChunkIndexes {
		if string(ci.Compression) != recordCompression[comp] || ci.MessageStartTime > ci.MessageEndTime || len(ci.MessageIndexOffsets) == 0 {
			t.Fatalf("%s: chunk index %+v", comp, ci)
		}
	}
	it, err := rd.Messages(mcap.UsingIndex(true), mcap.InOrder(mcap.LogTimeOrder))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var last uint64
	for {
		_, _, m, err := it.NextInto(nil)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.LogTime < last {
			t.Fatalf("%s: log time %d after %d", comp, m.LogTime, last)
		}
		last = m.LogTime
		n++
	}
	if n != want {
		t.Errorf("%s: %d messages through the indexes, want %d", comp, n, want)
	}
}

// Foxglove's own reader (@mcap/core, fzstd, @foxglove/wasm-lz4) reads
// chunks of each compression, many of them, and stored ones.
func TestFoxgloveReadsBothCompressions(t *testing.T) {
	if err := mcapcheck.Available(); err != nil {
		t.Skip(err.Error())
	}
	recs := many(600)
	for _, comp := range []string{CompressionLZ4, CompressionZstd, CompressionNone} {
		file := filepath.Join(t.TempDir(), comp+".mcap")
		if err := os.WriteFile(file, encode(t, Options{Decl: registry(t).Decl, ChunkSize: 4096, Compression: comp, PoseInterval: -1}, recs), 0o644); err != nil {
			t.Fatal(err)
		}
		res := mcapcheck.Check(t, file)
		for _, p := range res.Problems {
			t.Errorf("%s: problem: %v", comp, p)
		}
		if res.MessagesRead != 1201 || !reflect.DeepEqual(res.Compression, []string{recordCompression[comp]}) {
			t.Errorf("%s: %d messages read, compression %v", comp, res.MessagesRead, res.Compression)
		}
	}
}

func TestCompressionRefused(t *testing.T) {
	var buf bytes.Buffer
	if _, err := New(&buf, Options{Compression: "gzip"}); err == nil || !strings.Contains(err.Error(), `"gzip"`) || buf.Len() != 0 {
		t.Errorf("gzip chunks: %v, %d bytes written", err, buf.Len())
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

// A write error reaches the caller: Record returns it soon after, Close
// returns it, and every goroutine has ended after Close.
func TestWriteErrorEndsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	w, err := New(&failWriter{n: 10000}, Options{Decl: registry(t).Decl, ChunkSize: 4096, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	recs := many(30)
	for i := 0; i < 100000 && err == nil; i++ {
		err = w.Record(recs[i%len(recs)])
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Record: %v", err)
	}
	if ferr := w.Flush(); ferr != err {
		t.Fatalf("Flush: %v", ferr)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close: no error")
	}
	leakcheck.Settled(t, before, "Close")
}

// The LZ4 frames written are those lz4.Writer writes with the same
// settings (fast level, 4 MiB blocks, no checksums), byte for byte: a
// chunk of JSON, one of more than a block, one that does not shrink.
func TestLZ4FrameIsTheLibrarys(t *testing.T) {
	var json []byte
	for i := 0; len(json) < 5<<20; i++ {
		json = fmt.Appendf(json, `{"time":%d,"x":%g}`+"\n", i, float64(i)/7)
	}
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(i*2654435761>>13) ^ byte(i>>3)
	}
	z, err := newCompressor(CompressionLZ4)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range [][]byte{json[:100000], json, noise, []byte("x")} {
		var want bytes.Buffer
		lw := lz4.NewWriter(&want)
		if err := lw.Apply(lz4.CompressionLevelOption(lz4.Fast), lz4.ChecksumOption(false), lz4.BlockSizeOption(lz4.Block4Mb), lz4.ConcurrencyOption(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := lw.Write(src); err != nil {
			t.Fatal(err)
		}
		if err := lw.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := z.compress([]byte("kept"), src)
		if err != nil || !bytes.Equal(got[4:], want.Bytes()) || string(got[:4]) != "kept" {
			t.Errorf("%d bytes: %d bytes written (%v), lz4.Writer %d", len(src), len(got)-4, err, want.Len())
		}
		back, err := io.ReadAll(lz4.NewReader(bytes.NewReader(got[4:])))
		if err != nil || !bytes.Equal(back, src) {
			t.Errorf("%d bytes: read back %d (%v)", len(src), len(back), err)
		}
	}
}

// A chunk's messages are in log-time order in the file (the mcap CLI's
// doctor asks for it) whatever order the records came in, after the
// schemas and channels they use, and the indexes find each where it is:
// records given in reverse blocks of 7, through one chunk and through
// many small ones on workers.
func TestMessagesInTimeOrder(t *testing.T) {
	recs := many(600)
	var scrambled []*dissect.Record
	for i := 0; i < len(recs); i += 7 {
		blk := slices.Clone(recs[i:min(i+7, len(recs))])
		slices.Reverse(blk)
		scrambled = append(scrambled, blk...)
	}
	reg := registry(t)
	// The records' messages, as the records in time order make them.
	records := func(m []msg) []msg {
		return slices.DeleteFunc(slices.Clone(m), func(x msg) bool { return !strings.HasPrefix(x.schema, "dissect.p.") })
	}
	want, _ := readBack(t, encode(t, Options{Decl: reg.Decl, Encoding: EncodingJSON, PoseInterval: -1}, recs))
	want = records(want)
	for _, o := range []Options{{ChunkSize: 64 << 20, Workers: 1}, {ChunkSize: 4096, Workers: 3}} {
		o.Decl, o.Encoding, o.PoseInterval = reg.Decl, EncodingJSON, -1
		raw := encode(t, o, scrambled)
		all, _ := readBack(t, raw) // in file order
		got := records(all)
		if o.ChunkSize == 4096 {
			checkIndexes(t, CompressionZstd, raw, len(all))
			slices.SortStableFunc(got, func(a, b msg) int { return cmp.Compare(a.logTime, b.logTime) })
		} else {
			for i := 1; i < len(all); i++ {
				if all[i].logTime < all[i-1].logTime {
					t.Fatalf("message %d (%s) at %d after one at %d", i, all[i].topic, all[i].logTime, all[i-1].logTime)
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("chunks of %d: the records' messages are not those of the records in time order", o.ChunkSize)
		}
	}
}

// TestLogTime: MCAP's log time is nanoseconds since 1970, 0 for instants
// before and 2^63-1 for those after (as UnixNano would overflow), exact
// at either edge.
func TestLogTime(t *testing.T) {
	last := time.Unix(0, 1<<63-1)
	for _, c := range []struct {
		t    time.Time
		want uint64
	}{
		{time.Unix(0, 0), 0},
		{time.Unix(0, -1), 0},
		{time.Unix(-1, 999_999_999), 0},
		{time.Date(1969, 7, 20, 20, 17, 40, 0, time.UTC), 0},
		{time.Unix(0, 1), 1},
		{time.Unix(1_700_000_000, 44_222_000), 1_700_000_000_044_222_000},
		{last, 1<<63 - 1},
		{last.Add(-1), 1<<63 - 2},
		{last.Add(1), 1<<63 - 1},
		{last.Add(time.Second), 1<<63 - 1},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 1<<63 - 1},
		{time.Time{}, 0},
	} {
		if got := logTime(c.t); got != c.want {
			t.Errorf("logTime(%v) = %d, want %d", c.t, got, c.want)
		}
	}
}
