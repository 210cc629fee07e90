package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of dissect (also dissect --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			return err
		},
	}
}

// versionLine says which dissect this is, from what the Go toolchain
// stamped into the binary: the module version (a tag, a pseudo-version
// built from the commit, or "(devel)"), the commit and its time, whether
// the working tree had changes, and the Go version and platform.
func versionLine() string {
	version, commit, when, dirty := "(devel)", "", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	return formatVersion(version, commit, when, dirty, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

func formatVersion(version, commit, when string, dirty bool, goVersion, platform string) string {
	s := "dissect " + version + "\n"
	switch {
	case commit == "":
		s += "commit: unknown (built without version control information, e.g. -buildvcs=false)\n"
	default:
		s += "commit: " + commit
		if when != "" {
			s += " (" + when + ")"
		}
		if dirty {
			s += ", with uncommitted changes"
		}
		s += "\n"
	}
	return s + "built with " + goVersion + " for " + platform
}
