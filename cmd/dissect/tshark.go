package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dissect-tools/dissect/output"
)

// tsharkOpts are tshark's spellings of the output form: -V (the packet
// details: every record as a tree) and -T (tshark's -T fields and -T
// json, the same as -o fields and -o json).
type tsharkOpts struct {
	details bool   // -V
	form    string // -T
	flags   *pflag.FlagSet
}

// tsharkForms are the forms of -T that dissect has: tshark's names of
// -o fields and -o json.
var tsharkForms = []string{"fields", "json"}

func (t *tsharkOpts) add(cmd *cobra.Command) {
	f := cmd.Flags()
	t.flags = f
	f.BoolVarP(&t.details, "details", "V", false, "print every record as a tree of all its keys and fields, arrays and objects expanded, long values wrapped to the terminal (tshark's -V; with -x the bytes follow each tree; docs/output.md)")
	f.StringVarP(&t.form, "tshark-output", "T", "", "tshark's -T: fields (the same as -o fields, with -e) or json (the same as -o json, JSON Lines); tshark's other forms (pdml, psml, ek, text, jsonraw) are not written")
	_ = cmd.RegisterFlagCompletionFunc("tshark-output", cobra.FixedCompletions(tsharkForms, cobra.ShellCompDirectiveNoFileComp))
}

// apply resolves -V and -T against -o: -T sets format; -V, -T and an -o
// that say different things are a usage error.
func (t *tsharkOpts) apply(format *string) error {
	given := t.flags != nil && t.flags.Changed("output")
	if t.form != "" {
		switch t.form {
		case "fields", "json":
		default:
			return usageError{fmt.Errorf("-T %s: dissect writes -T fields or -T json (-o fields, -o json); for tshark's -V text details use -V, and -o table, parquet or mcap for the others", oneLine(t.form))}
		}
		if given && sameForm(*format) != t.form {
			return usageError{fmt.Errorf("-T %s and -o %s say different things: give one of them (-T %s is -o %s)", t.form, oneLine(*format), t.form, t.form)}
		}
		if t.details {
			return usageError{fmt.Errorf("-V (the details as text) and -T %s say different things: give one of them", t.form)}
		}
		*format = t.form
	}
	if t.details && given && *format != "table" {
		return usageError{fmt.Errorf("-V writes the details as text, and -o %s another form: give one of them", oneLine(*format))}
	}
	return nil
}

// sameForm returns an -o form as -T names it.
func sameForm(format string) string {
	if format == "jsonl" {
		return "json"
	}
	return format
}

// treeOutput returns the -V writer: wrapped to the terminal's width (none
// with --wide or on a pipe), ASCII on a terminal that is not UTF-8.
func (o *readOpts) treeOutput(stdout io.Writer, ascii bool) sink {
	return output.NewTree(stdout, output.TreeOptions{Width: o.statsTable.Width, ASCII: ascii, Hex: o.q.hex})
}
