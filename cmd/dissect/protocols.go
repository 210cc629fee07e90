package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect"
	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/spec"
	"github.com/dissect-tools/dissect/output"
)

func newProtocolsCmd() *cobra.Command {
	var fields, schema bool
	var check string
	var po protoFlags
	cmd := &cobra.Command{
		Use:   "protocols [--fields | --schema] [PROTOCOL]",
		Short: "List the dissectors, their default ports and how each is detected",
		Long: `List the protocols dissect decodes. NAME is what -d takes
(-d tcp.port==4000,deltarobot); DEFAULT PORTS are tried when content
detection finds nothing; the detection rules follow the table.

--fields lists the field names that display filters (-Y) and -e take,
with their kinds and units, for every protocol or for the one named
(dissect protocols --fields deltarobot).

--schema prints the declarations as JSON Lines, one line per record type:
{"proto": P, "type": T, "schema": S}, S the JSON Schema (2020-12) of a
whole -o json record of that type. T "*" stands for the types a protocol
names on the wire but does not know (VRPN); P "*" for the records any
stream may carry (gap, skipped). Every record dissect writes validates
against its line: look up (proto, type), else ("*", type), else
(proto, "*"). Give the same --proto, --proto-path, --handcontrol-raw,
--neptune-int16 and --protocol flags as the run whose records you check.

--check FILE reads a protocol file (docs/your-protocol.md) and shows the
record types and fields it declares, or the first thing wrong with it as
FILE:LINE:COL: WHAT (and a non-zero exit status).`,
		Example: `  dissect protocols
  dissect protocols --fields vrpn
  dissect protocols --schema > schema.jsonl
  dissect protocols --schema handcontrol | jq -c '{proto, type}'
  dissect protocols --check docs/examples/acme-servo.yaml
  dissect protocols --protocol docs/examples/acme-servo.yaml --schema acme-servo`,
		Args: func(cmd *cobra.Command, args []string) error {
			if fields && schema {
				return usageError{fmt.Errorf("--fields and --schema: give one")}
			}
			if check != "" && (fields || schema || len(args) > 0) {
				return usageError{fmt.Errorf("--check FILE takes no other argument")}
			}
			if !fields && !schema && len(args) > 0 {
				return usageError{fmt.Errorf("unexpected argument %q (a protocol is named only with --fields or --schema)", args[0])}
			}
			if len(args) > 1 {
				return usageError{fmt.Errorf("--fields and --schema take one protocol, got %d", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if check != "" {
				return checkProtocolFile(cmd.OutOrStdout(), check)
			}
			reg, err := all.Registry(po.options())
			if err != nil {
				return err
			}
			if schema {
				only := ""
				if len(args) == 1 {
					only = args[0]
				}
				return writeSchema(cmd.OutOrStdout(), reg, only)
			}
			w := cmd.OutOrStdout()
			tt := terminalOf(w, os.Getenv)
			width := tt.width
			if width <= 0 {
				width = defaultWidth // a pipe: the width of a terminal, for reading
			}
			text := func(s string) string {
				s = output.Escape(s)
				if !tt.utf8 {
					s = output.ASCII(s)
				}
				return s
			}
			if fields {
				only := ""
				if len(args) == 1 {
					only = args[0]
				}
				return writeFields(w, reg.Protocols(), only, width, text)
			}
			rows := [][4]string{{"NAME", "TRANSPORTS", "DEFAULT PORTS", "DESCRIPTION"}}
			var detection [][2]string
			for _, p := range reg.Protocols() {
				in := p.Info()
				var tr, ports []string
				for _, x := range in.Transports {
					tr = append(tr, x.String())
				}
				for _, x := range in.Ports {
					ports = append(ports, fmt.Sprintf("%s/%d", x.Transport, x.Port))
				}
				rows = append(rows, [4]string{text(in.Name), text(strings.Join(tr, ", ")), text(orNone(ports)), text(in.Title)})
				det := in.Detection
				if det == "" {
					det = "none: by default port or -d only"
				}
				detection = append(detection, [2]string{text(in.Name), text(det)})
			}
			writeColumns(w, rows, width)
			writeWrapped(w, "", "Detection by content (first bytes of each direction; on TCP and serial also mid-stream):", width)
			label := 0
			for _, d := range detection {
				label = max(label, output.DisplayWidth(d[0]))
			}
			for _, d := range detection {
				writeWrapped(w, fmt.Sprintf("  %-*s ", label, d[0]), d[1], width)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&fields, "fields", false, "list the field names of each protocol, for -Y and -e (optionally of one protocol: --fields deltarobot)")
	cmd.Flags().StringVar(&check, "check", "", "check a protocol file (FILE:LINE:COL of the first error) and list the fields it declares")
	cmd.Flags().BoolVar(&schema, "schema", false, "print the JSON Schema of every record type as JSON Lines (optionally of one protocol: --schema vrpn)")
	po.add(cmd)
	return cmd
}

// checkProtocolFile loads one protocol file and lists its fields; a bad
// file is an error of one line naming where.
func checkProtocolFile(w io.Writer, path string) error {
	p, err := spec.LoadFile(path)
	if err != nil {
		return err
	}
	builtin, err := all.Protocols(all.Options{})
	if err != nil {
		return err
	}
	// beside the built-ins: a name or default port taken is an error here
	// rather than in the first run
	if err := p.Beside(builtin); err != nil {
		return err
	}
	in := p.Info()
	fmt.Fprintf(w, "%s: protocol %s, %d record types, detection: %s\n\n", output.Escape(path), output.Escape(in.Name), len(in.Types), output.Escape(in.Detection))
	tt := terminalOf(w, os.Getenv)
	width := tt.width
	if width <= 0 {
		width = defaultWidth
	}
	return writeFields(w, []dissect.Protocol{p}, "", width, output.Escape)
}

// recordKeys are the names of the envelope's keys (dissect.Envelope): the
// JSON keys every record has, then the other names of -Y and -e, then
// tshark's spellings of them; filtered without a protocol prefix (-Y
// 'type == "pong"', -Y 'tcp.port == 4000').
func recordKeys() (json, more, tshark []string) {
	for _, k := range dissect.Envelope() {
		if k.JSON {
			json = append(json, k.Name)
		} else {
			more = append(more, k.Name)
		}
		for _, t := range k.TShark {
			tshark = append(tshark, t+" ("+k.Name+")")
		}
	}
	return json, more, tshark
}

// writeFields writes the field names of protos (of those whose decode-as
// name or proto key is only, when only is not ""), wrapped at width
// columns: per field its filter name (proto.field), type, doc and the
// record types that carry it.
func writeFields(w io.Writer, protos []dissect.Protocol, only string, width int, text func(string) string) error {
	var infos []dissect.Info
	var names []string
	for _, p := range protos {
		in := p.Info()
		names = append(names, in.Name)
		if only == "" || in.Name == only || in.Proto == only {
			infos = append(infos, in)
		}
	}
	if len(infos) == 0 {
		return usageError{fmt.Errorf("--fields %q: unknown protocol (known: %s)", only, strings.Join(names, ", "))}
	}
	keys, more, tshark := recordKeys()
	writeWrapped(w, "", "Every record has the keys "+strings.Join(keys, ", ")+
		"; filter them by name (-Y 'type == \"pong\"'). -Y and -e also take "+strings.Join(more, ", ")+
		", and tshark's names "+strings.Join(tshark, ", ")+". time_epoch and time_relative are the time as seconds since 1970 and since the first packet, with nine decimals in -e; info is the table's INFO column; ip.addr and tcp.port (and the like) match either end. Protocol fields are named PROTO.FIELD (proto as in the \"proto\" key); "+
		"FIELD[] matches any item of an array, FIELD[N] item N (from 0); TYPE is the declared kind (float32, uint, array of T...); roles (latency, sender...) say what a field means to -z and -o mcap.", width)
	for _, in := range infos {
		fmt.Fprintln(w)
		title := text(in.Name)
		if in.Proto != in.Name {
			title += " (proto " + text(in.Proto) + ")"
		}
		writeWrapped(w, "", title+": "+text(in.Title), width)
		fields := dissect.FieldInfos(in.Types)
		nameW, typeW := len("FIELD"), len("TYPE")
		for _, f := range fields {
			nameW = max(nameW, output.DisplayWidth(text(in.Proto+"."+f.Name)))
			typeW = max(typeW, output.DisplayWidth(text(f.Type)))
		}
		// A name longer than the room left beside its type and 20 columns
		// of description goes on a line of its own.
		nameW = min(nameW, max(len("FIELD"), width-typeW-26))
		label := func(name, typ string) string {
			if output.DisplayWidth(name) > nameW {
				fmt.Fprintln(w, fitLine("  "+name, width))
				name = ""
			}
			return fmt.Sprintf("  %-*s  %-*s  ", nameW, name, typeW, typ)
		}
		writeWrapped(w, label("FIELD", "TYPE"), "DESCRIPTION [RECORD TYPES]", width)
		for _, f := range fields {
			doc := text(f.Doc)
			if f.Unit != "" {
				doc += ", in " + text(f.Unit)
			}
			if f.Role != dissect.RoleNone {
				doc += " (" + f.Role.String() + ")"
			}
			if len(f.Types) > 0 {
				doc += " [" + shortTypes(f.Types, text) + "]"
			}
			writeWrapped(w, label(text(in.Proto+"."+f.Name), text(f.Type)), doc, width)
		}
	}
	return nil
}

// shortTypes joins record types, keeping the first few when they are
// many or long ("a, b, +3 more").
func shortTypes(types []string, text func(string) string) string {
	const maxLen = 48
	var b strings.Builder
	for i, t := range types {
		t = text(t)
		rest := len(types) - i - 1
		more := ""
		if rest > 0 {
			more = fmt.Sprintf(", +%d more", rest)
		}
		if i > 0 && output.DisplayWidth(b.String())+2+output.DisplayWidth(t)+len(more) > maxLen {
			fmt.Fprintf(&b, ", +%d more", len(types)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t)
	}
	return b.String()
}

// writeColumns writes rows (the first is the header) as plain aligned
// columns, two spaces apart, the last one wrapped to fit width columns.
// When fewer than minLastColumn columns would be left for it, the last
// column goes on lines of its own, indented, under the others; when even
// the first three do not fit, each row is a block of wrapped lines.
func writeColumns(w io.Writer, rows [][4]string, width int) {
	const gap, minLastColumn = 2, 24
	var widths [3]int
	for _, r := range rows {
		for i := range widths {
			widths[i] = max(widths[i], output.DisplayWidth(r[i]))
		}
	}
	start := 0
	for _, n := range widths {
		start += n + gap
	}
	if start-gap > width {
		// Too narrow for the columns: one block per row, wrapped.
		for _, r := range rows[1:] {
			fmt.Fprintln(w, fitLine(r[0], width))
			writeWrapped(w, "    ", "transports: "+r[1]+"; default ports: "+r[2], width)
			writeWrapped(w, "    ", r[3], width)
		}
		fmt.Fprintln(w)
		return
	}
	below := width-start < minLastColumn
	for _, r := range rows {
		var line strings.Builder
		for i, n := range widths {
			line.WriteString(r[i])
			if i < len(widths)-1 || !below {
				line.WriteString(strings.Repeat(" ", n+gap-output.DisplayWidth(r[i])))
			}
		}
		if below {
			fmt.Fprintln(w, strings.TrimRight(fitLine(line.String(), width), " "))
			writeWrapped(w, "    ", r[3], width)
			continue
		}
		writeWrapped(w, line.String(), r[3], width)
	}
	fmt.Fprintln(w)
}

// fitLine cuts s to width columns (every character of it takes one).
func fitLine(s string, width int) string {
	if output.DisplayWidth(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width])
}

// writeWrapped writes text after label, wrapped at width columns, with
// continuation lines indented under the text. A word longer than a line is
// cut. When the label leaves fewer than 20 columns, the text goes on the
// lines after it, indented by four.
func writeWrapped(w io.Writer, label, text string, width int) {
	width = max(width, 1)
	if output.DisplayWidth(label)+20 > width && label != "" && strings.TrimSpace(label) != "" {
		fmt.Fprintln(w, strings.TrimRight(fitLine(label, width), " "))
		label = strings.Repeat(" ", min(4, width-1))
	}
	indent := strings.Repeat(" ", output.DisplayWidth(label))
	line, empty := label, true
	room := func() int { return width - output.DisplayWidth(line) }
	for _, word := range strings.Fields(text) {
		if !empty && room() < 1+output.DisplayWidth(word) {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		for room() < output.DisplayWidth(word) {
			// A word longer than a whole line: cut it.
			r := []rune(word)
			n := max(room(), 1)
			fmt.Fprintln(w, line+string(r[:n]))
			line, word = indent, string(r[n:])
		}
		line += word
		empty = false
	}
	fmt.Fprintln(w, line)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
