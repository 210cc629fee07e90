package vrpn

import "github.com/dissect-tools/dissect/dissect"

// Names of vrpn_Auxiliary_Logger's message types.
const (
	nameAuxLogRequest = "vrpn_Auxiliary_Logger Logging_request"
	nameAuxLogReport  = "vrpn_Auxiliary_Logger Logging_response"
	nameAuxLogStatus  = "vrpn_Auxiliary_Logger Logging_status_request"
)

// auxLoggerDefs lists the catalogued types of mainline's
// vrpn_Auxiliary_Logger.C. A client's vrpn_Auxiliary_Logger_Remote asks the
// server to log the server's connections to the named files (empty names
// stop logging) or asks which files it logs to; the server answers either
// with Logging_response, naming the files it now logs to (timed for a
// logging request: roundtrip.go). All three are
// written by pack_log_message_of_type: four int32 lengths, then the four
// names without NULs (the status request: four zero lengths).
func auxLoggerDefs() []msgDef {
	files := func(what string) []dissect.FieldDecl {
		// No layout: the lengths come first and are not recorded.
		name := func(id, doc string) dissect.FieldDecl {
			return dissect.FieldDecl{Name: id, Kind: dissect.KindString, Doc: what + doc}
		}
		return []dissect.FieldDecl{
			name("local_in", "file for the messages the server's connection receives (empty: none)"),
			name("local_out", "file for the messages the server's connection sends (empty: none)"),
			name("remote_in", "file the client's side is asked to log its incoming messages to (empty: none)"),
			name("remote_out", "file the client's side is asked to log its outgoing messages to (empty: none)"),
		}
	}
	return []msgDef{{
		name:     nameAuxLogRequest,
		doc:      "a client asks the server to log to new files, closing the old ones (empty names: stop logging; answered by Logging_response)",
		decls:    files("log "),
		decode:   func(c *dissect.Ctx, b []byte) ([]byte, bool) { return decodeAuxLog(c, b, nameAuxLogRequest) },
		exchange: dissect.Exchange{Role: dissect.Request},
	}, {
		name:  nameAuxLogReport,
		doc:   "the server names the files it logs to, after a logging request or a status request (rtt_ms: for a logging request)",
		decls: files("log "),
		decode: func(c *dissect.Ctx, b []byte) ([]byte, bool) {
			return decodeAuxLog(c, b, nameAuxLogReport)
		},
		exchange: dissect.Exchange{Role: dissect.Reply, Answers: nameAuxLogRequest},
	}, {
		// Not declared a request: its answer is a Logging_response, whose
		// round trips -z rtt files under Logging_request (roundtrip.go).
		name:   nameAuxLogStatus,
		doc:    "a client asks the server which files it logs to (mainline sends four empty names; answered by Logging_response)",
		decls:  files("(always empty from mainline) "),
		decode: func(c *dissect.Ctx, b []byte) ([]byte, bool) { return decodeAuxLog(c, b, nameAuxLogStatus) },
	}}
}

// decodeAuxLog decodes the four lengths and the four names they give. Like
// mainline's unpack_log_message_from_buffer it wants the lengths to
// account for the whole body; bytes after the names are warned about.
func decodeAuxLog(c *dissect.Ctx, b []byte, name string) ([]byte, bool) {
	r := c.Rec
	files := [4]string{"local_in", "local_out", "remote_in", "remote_out"} // in wire order
	if len(b) < 16 {
		r.Warnf("body of %d bytes too short for %s: the name lengths at offset 0 need 16 bytes", len(b), name)
		return nil, false
	}
	var lens [4]int
	total := 16
	for i := range lens {
		n := i32(b[4*i:])
		if n < 0 {
			r.Warnf("%s: length %d of %s at offset %d is negative", name, n, files[i], 4*i)
			return nil, false
		}
		lens[i] = int(n)
		total += int(n)
	}
	if total > len(b) {
		r.Warnf("body of %d bytes too short for %s: names of %d, %d, %d and %d bytes at offset 16", len(b), name, lens[0], lens[1], lens[2], lens[3])
		return nil, false
	}
	long(c, b, total, name)
	if !c.Decode {
		return nil, true
	}
	var s []byte
	off := 16
	for i, n := range lens {
		v := dissect.Str(string(b[off : off+n]))
		off += n
		r.Add(files[i], v)
		if n > 0 {
			s = appendValue(append(append(append(s, ' '), files[i]...), '='), v)
		}
	}
	if len(s) == 0 {
		s = append(s, " no files"...)
	}
	return s, true
}
