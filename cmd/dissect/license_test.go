package main

import (
	"os"
	"strings"
	"testing"
)

// TestLicense: the repository has its LICENSE, the Apache License 2.0
// word for word (as Debian ships it) with the appendix's copyright line
// filled in, and the READMEs that point at it find it.
func TestLicense(t *testing.T) {
	got, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatalf("no LICENSE at the repository's root: %v", err)
	}
	const line = "   Copyright 2026 The dissect authors\n"
	if !strings.Contains(string(got), line) || !strings.Contains(string(got), "Apache License\n                           Version 2.0, January 2004") ||
		!strings.Contains(string(got), "END OF TERMS AND CONDITIONS") {
		t.Errorf("LICENSE is not the Apache License 2.0 with %q", line)
	}
	std, err := os.ReadFile("/usr/share/common-licenses/Apache-2.0")
	if err != nil {
		t.Logf("no /usr/share/common-licenses/Apache-2.0 (%v): the text is not compared word for word", err)
	} else if want := strings.Replace(string(std), "   Copyright [yyyy] [name of copyright owner]\n", line, 1); string(got) != want {
		t.Errorf("LICENSE differs from /usr/share/common-licenses/Apache-2.0 beyond the copyright line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "\n## Licence\n\nApache License 2.0: [LICENSE](LICENSE)") {
		t.Error("README.md has no Licence section naming LICENSE")
	}
	pc, err := os.ReadFile("../../pcaps/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pc), "[LICENSE](../LICENSE)") {
		t.Error("pcaps/README.md says \"same as the repository\" without pointing at ../LICENSE")
	}
}
