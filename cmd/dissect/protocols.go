package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect/all"
	"github.com/dissect-tools/dissect/dissect/output"
)

func newProtocolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "protocols",
		Short: "List the dissectors, their default ports and how each is detected",
		Long: `List the protocols dissect decodes. NAME is what -d takes
(-d tcp.port==4000,deltarobot); DEFAULT PORTS are tried when content
detection finds nothing; the detection rules follow the table.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := all.Registry(all.Options{})
			if err != nil {
				return err
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
				label = max(label, utf8.RuneCountInString(d[0]))
			}
			for _, d := range detection {
				writeWrapped(w, fmt.Sprintf("  %-*s ", label, d[0]), d[1], width)
			}
			return nil
		},
	}
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
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
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
				line.WriteString(strings.Repeat(" ", n+gap-utf8.RuneCountInString(r[i])))
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
	if utf8.RuneCountInString(s) <= width {
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
	if utf8.RuneCountInString(label)+20 > width && label != "" && strings.TrimSpace(label) != "" {
		fmt.Fprintln(w, strings.TrimRight(fitLine(label, width), " "))
		label = strings.Repeat(" ", min(4, width-1))
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(label))
	line, empty := label, true
	room := func() int { return width - utf8.RuneCountInString(line) }
	for _, word := range strings.Fields(text) {
		if !empty && room() < 1+utf8.RuneCountInString(word) {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
		}
		for room() < utf8.RuneCountInString(word) {
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
