package stats

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dissect-tools/dissect/dissect"
)

// followSel is tshark's form of follow, -z follow,tcp|udp,ascii|hex|raw,N:
// N is the stream's number among those of one transport, as tshark
// numbers tcp.stream and udp.stream (and as -Y tcp.stream takes it), while
// dissect's stream numbers the streams of all transports together. The
// index is resolved as streams open ([Follow.StreamOpened]), so nothing is
// kept of the other streams.
type followSel struct {
	transport dissect.Transport
	mode      string // "ascii", "hex" or "raw"
	index     int    // tshark's stream index within the transport
	opened    int    // streams of the transport opened so far (until found)
	found     bool   // the index-th was opened: Follow.stream is its number
}

// followRule is tshark's separator line around the output of a follow.
const followRule = "==================================================================="

// NewFollowTShark returns follow in tshark's form: the index-th stream
// (from 0) of transport (TCP or UDP), shown as mode: "ascii" (one line per
// record, as follow,STREAM shows them), "hex" (each also with its bytes as
// a hex dump) or "raw" (each record's bytes as one line of hex, the
// records of B indented by a tab, as tshark's raw). The stream is found
// through StreamOpened, which the run must call for every stream opened.
func NewFollowTShark(transport dissect.Transport, mode string, index int) *Follow {
	f := NewFollow(-1)
	f.sel = &followSel{transport: transport, mode: mode, index: index}
	return f
}

// parseFollow parses what follows "follow,": "STREAM", or tshark's
// "tcp|udp,ascii|hex|raw,N".
func parseFollow(rest string) (*Follow, error) {
	parts := strings.Split(rest, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if len(parts) == 1 {
		n, err := parseStreamIndex(parts[0])
		if err != nil {
			return nil, fmt.Errorf("stream: want a stream number (0, 1, ...) or tcp|udp,ascii|hex|raw,N")
		}
		return NewFollow(n), nil
	}
	if len(parts) != 3 {
		return nil, fmt.Errorf("want follow,STREAM or follow,tcp|udp,ascii|hex|raw,N")
	}
	var tr dissect.Transport
	switch parts[0] {
	case "tcp":
		tr = dissect.TCP
	case "udp":
		tr = dissect.UDP
	default:
		return nil, fmt.Errorf("transport %q: want tcp or udp (follow,tcp|udp,ascii|hex|raw,N)", parts[0])
	}
	switch parts[1] {
	case "ascii", "hex", "raw":
	default:
		return nil, fmt.Errorf("mode %q: want ascii, hex or raw (follow,%s,ascii|hex|raw,N)", parts[1], parts[0])
	}
	n, err := parseStreamIndex(parts[2])
	if err != nil {
		return nil, fmt.Errorf("index %q: want the %s stream's index as tshark numbers %s.stream (0, 1, ...)", parts[2], parts[0], parts[0])
	}
	return NewFollowTShark(tr, parts[1], n), nil
}

func parseStreamIndex(s string) (int, error) {
	var n int
	if s == "" || len(s) > 9 {
		return 0, fmt.Errorf("bad index")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad index")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// StreamOpened learns of a stream opened: the one of follow's transport
// whose number there (StreamID.Index, tshark's tcp.stream or udp.stream)
// is the index is the one followed. It does nothing in the form
// follow,STREAM.
func (s *Follow) StreamOpened(id dissect.StreamID) {
	sel := s.sel
	if sel == nil || sel.found || id.Transport != sel.transport {
		return
	}
	sel.opened = id.Index + 1
	if id.Index == sel.index {
		sel.found = true
		s.stream = id.ID
	}
}

// NeedsRaw reports whether the records' bytes are wanted (hex and raw).
func (s *Follow) NeedsRaw() bool { return s.sel != nil && s.sel.mode != "ascii" }

// selJSON adds tshark's form to a JSON row: "follow" (tcp,raw, say) and
// "transport_stream", the index tshark gives the stream.
func (s *Follow) selJSON(r *row) {
	if s.sel == nil {
		return
	}
	r.str("follow", s.sel.transport.String()+","+s.sel.mode)
	r.int("transport_stream", int64(s.sel.index))
}

// writeTShark writes tshark's frame: a rule, "Follow: tcp,ascii", the
// filter, the two nodes (node 0 is A, the source of the stream's first
// record), the records, a rule.
func (s *Follow) writeTShark(w io.Writer, o TableOptions) error {
	sel := s.sel
	tr := sel.transport.String()
	head := []string{followRule, "Follow: " + tr + "," + sel.mode}
	filter := "Filter: " + tr + ".stream eq " + itoa(int64(sel.index))
	switch {
	case !sel.found:
		head = append(head, filter, "no "+tr+" stream "+itoa(int64(sel.index))+" ("+itoa(int64(sel.opened))+" "+tr+" streams in all)")
	case !s.started:
		head = append(head, filter+" (stream "+itoa(int64(s.stream))+")", "no record")
	default:
		head = append(head, filter+" (stream "+itoa(int64(s.stream))+")", "Node 0: "+text(s.a), "Node 1: "+text(s.b))
	}
	var err error
	if sel.mode == "raw" {
		err = s.writeRaw(w, head)
	} else {
		o.Hex = o.Hex || sel.mode == "hex"
		err = s.writeTable(w, o, head)
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, followRule+"\n")
	return err
}

// writeRaw writes the header, then each record's bytes as one line of
// hex, B's records indented by a tab. Lines are not cut: they are data.
// Records without bytes (gaps) have no line.
func (s *Follow) writeRaw(w io.Writer, head []string) error {
	bw := bufio.NewWriter(w)
	for _, h := range head {
		bw.WriteString(h)
		bw.WriteByte('\n')
	}
	var b []byte
	for i := range s.entries {
		e := &s.entries[i]
		if len(e.raw) == 0 {
			continue
		}
		b = b[:0]
		if e.dir == 1 {
			b = append(b, '\t')
		}
		for _, c := range e.raw {
			b = append(b, hexDigits[c>>4], hexDigits[c&15])
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	if s.dropped > 0 {
		bw.WriteString(s.moreNote())
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
