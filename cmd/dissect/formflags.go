package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// formFlags are the flags that apply to one output form only.
var formFlags = []struct{ flag, form string }{
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
		if fs.Lookup(f.flag) != nil && fs.Changed(f.flag) && format != f.form {
			return usageError{fmt.Errorf("--%s applies to -o %s, not -o %s", f.flag, f.form, oneLine(format))}
		}
	}
	return nil
}
