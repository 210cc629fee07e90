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
	// tshark's reflexes: -n and -l are accepted and change nothing; -R,
	// -2 and -G are refused with a pointer to what dissect does instead.
	noResolve, lineBuffered, twoPass bool
	readFilter, glossary             string
}

// tsharkReflexes are tshark's flags that dissect answers by pointing to
// its own way (refused, exit 2), in the order they are checked.
var tsharkReflexes = []struct{ name, why string }{
	{"read-filter", "-R is tshark's two-pass read filter: dissect's display filter is -Y FILTER, and -r IN -Y FILTER -w OUT cuts the packets"},
	{"two-pass", "-2: dissect needs no second pass (replies are matched to their requests as they come): leave -2 out"},
	{"glossary", "-G: tshark's glossaries are 'dissect protocols' (the protocols and ports), 'dissect protocols --fields' (every filter and -e name) and 'dissect protocols --schema' (JSON Schema)"},
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
	// tshark's reflexes, hidden from --help (docs/display-filters.md lists
	// them): accepted where harmless, else a one-line pointer.
	f.BoolVarP(&t.noResolve, "no-name-resolution", "n", false, "tshark's -n: dissect never resolves names; accepted and ignored")
	f.BoolVarP(&t.lineBuffered, "line-buffered", "l", false, "tshark's -l: records are written as their packets come on pipes and terminals; accepted and ignored")
	f.StringVarP(&t.readFilter, "read-filter", "R", "", "tshark's -R: use -Y")
	f.BoolVarP(&t.twoPass, "two-pass", "2", false, "tshark's -2: not needed")
	f.StringVarP(&t.glossary, "glossary", "G", "", "tshark's -G: use 'dissect protocols'")
	for _, n := range []string{"no-name-resolution", "line-buffered", "read-filter", "two-pass", "glossary"} {
		_ = f.MarkHidden(n)
	}
}

// reflex returns the pointer for a tshark flag dissect answers another
// way, nil when none was given.
func (t *tsharkOpts) reflex() error {
	if t.flags == nil {
		return nil
	}
	for _, r := range tsharkReflexes {
		if t.flags.Changed(r.name) {
			return usageError{fmt.Errorf("%s", r.why)}
		}
	}
	return nil
}

// apply resolves -V and -T against -o: -T sets format; -V, -T and an -o
// that say different things are a usage error.
func (t *tsharkOpts) apply(format *string) error {
	if err := t.reflex(); err != nil {
		return err
	}
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
