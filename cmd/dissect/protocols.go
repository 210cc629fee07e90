package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"github.com/dissect-tools/dissect/dissect/all"
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
			t := tablewriter.NewWriter(w)
			t.Header("Name", "Transports", "Default ports", "Description")
			for _, p := range reg.Protocols() {
				in := p.Info()
				var tr, ports []string
				for _, x := range in.Transports {
					tr = append(tr, x.String())
				}
				for _, x := range in.Ports {
					ports = append(ports, fmt.Sprintf("%s/%d", x.Transport, x.Port))
				}
				if err := t.Append(in.Name, strings.Join(tr, ", "), orNone(ports), in.Title); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
			fmt.Fprintln(w, "\nDetection by content (first bytes of each direction; on TCP and serial also mid-stream):")
			for _, p := range reg.Protocols() {
				in := p.Info()
				det := in.Detection
				if det == "" {
					det = "none: by default port or -d only"
				}
				writeWrapped(w, fmt.Sprintf("  %-13s", in.Name), det, 100)
			}
			return nil
		},
	}
}

// writeWrapped writes text after label, wrapped at width columns, with
// continuation lines indented under the text.
func writeWrapped(w io.Writer, label, text string, width int) {
	indent := strings.Repeat(" ", len(label))
	line, empty := label, true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			fmt.Fprintln(w, line)
			line, empty = indent, true
		}
		if !empty {
			line += " "
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
