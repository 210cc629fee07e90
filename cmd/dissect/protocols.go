package main

import (
	"fmt"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/spf13/cobra"

	"dissect/dissect/all"
)

func newProtocolsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "protocols",
		Short: "List the dissectors, their default ports and how each is detected",
		Long: `List the protocols dissect decodes. NAME is what -d takes
(-d tcp.port==4000,deltarobot); PORTS are tried when content detection finds
nothing; DETECTION says what content identifies the protocol.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := all.Registry()
			if err != nil {
				return err
			}
			t := tablewriter.NewWriter(cmd.OutOrStdout())
			t.Header("Name", "Transports", "Default ports", "Detection", "Description")
			for _, p := range reg.Protocols() {
				in := p.Info()
				var tr, ports []string
				for _, x := range in.Transports {
					tr = append(tr, x.String())
				}
				for _, x := range in.Ports {
					ports = append(ports, fmt.Sprintf("%s/%d", x.Transport, x.Port))
				}
				det := in.Detection
				if det == "" {
					det = "none (port or -d only)"
				}
				if err := t.Append(in.Name, strings.Join(tr, ", "), orNone(ports), det, in.Title); err != nil {
					return err
				}
			}
			return t.Render()
		},
	}
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
