package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// formFlags are the flags that apply to some output forms only (form:
// their names, space-separated).
var formFlags = []struct{ flag, form string }{
	{"mcap-encoding", "mcap foxglove"},
	{"speed", "foxglove"},
	{"mcap-compression", "mcap"},
	{"part-id", "parquet"},
	{"max-partitions", "parquet"},
	{"parquet-compression", "parquet"},
}

// checkFormFlags refuses a flag of one output form given with another:
// it would do nothing, and the user meant something by it.
func checkFormFlags(fs *pflag.FlagSet, format string) error {
	if fs == nil {
		return nil
	}
	for _, f := range formFlags {
		if fs.Lookup(f.flag) != nil && fs.Changed(f.flag) && !slices.Contains(strings.Fields(f.form), format) {
			return usageError{fmt.Errorf("--%s applies to -o %s, not -o %s", f.flag, strings.ReplaceAll(f.form, " ", " and -o "), oneLine(format))}
		}
	}
	return nil
}
