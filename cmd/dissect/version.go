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
	version, commit, when, dirty := buildVersion()
	return formatVersion(version, commit, when, dirty, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// buildVersion reads what the Go toolchain stamped into the binary (see
// versionLine). A test binary, or a build with -buildvcs=false, has no
// commit; a go build in a checkout has version "(devel)" and the commit.
func buildVersion() (version, commit, when string, dirty bool) {
	version = "(devel)"
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
	return version, commit, when, dirty
}

// createdBy names dissect in the files it writes (Parquet's created_by),
// in the form Parquet readers parse: "dissect version VERSION (build
// COMMIT)", the commit's first 12 hex digits, with "-dirty" when the
// working tree had changes; "dissect version VERSION" without a commit.
func createdBy() string {
	version, commit, _, dirty := buildVersion()
	return formatCreatedBy(version, commit, dirty)
}

func formatCreatedBy(version, commit string, dirty bool) string {
	s := "dissect version " + version
	if commit == "" {
		return s
	}
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if dirty {
		commit += "-dirty"
	}
	return s + " (build " + commit + ")"
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
