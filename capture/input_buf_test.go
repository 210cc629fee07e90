package capture

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// TestInputBufferSize: a small capture is read with a small buffer, and a
// capture of unknown size longer than the first buffer is read whole, with
// a record straddling the point where the buffer is replaced.
func TestInputBufferSize(t *testing.T) {
	small := newPcapFile(binary.LittleEndian, false, 65535, 1).record(1, 0, make([]byte, 60), 60).buf
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	if pkts, err := readBytes(t, small); err != nil || len(pkts) != 1 {
		t.Fatalf("%v, %v", pkts, err)
	}
	runtime.ReadMemStats(&m1)
	if n := m1.TotalAlloc - m0.TotalAlloc; n > 64<<10 {
		t.Errorf("reading a %d-byte capture allocated %d bytes", len(small), n)
	}

	f := newPcapFile(binary.LittleEndian, false, 65535, 1)
	var want []got
	for i := range 40 { // 40 records of 1000 bytes: past 16 KiB
		data := bytes.Repeat([]byte{byte(i)}, 1000)
		f.record(uint32(i), 0, data, 1000)
		want = append(want, got{Time: time.Unix(int64(i), 0).UTC(), LinkType: 1, Data: string(data), Length: 1000})
	}
	src, err := NewReader(iotest.HalfReader(bytes.NewReader(f.buf)), "half")
	if err != nil {
		t.Fatal(err)
	}
	pkts, err := readAll(t, src)
	if err != nil {
		t.Fatal(err)
	}
	sameGot(t, pkts, want)
}
