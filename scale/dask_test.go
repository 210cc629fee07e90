// Package scale_test runs scale/dask_ingest.py, the lake filled by a Dask
// cluster (docs/scale.md), end to end: a real LocalCluster of two workers,
// the dissect binary built from this tree, the lake read back by DuckDB.
package scale_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/dissect-tools/dissect/dissect/dissecttest"
	"github.com/dissect-tools/dissect/internal/duckdb"
)

// python is the interpreter the script is documented for: Debian's, with
// its python3-distributed.
const python = "/usr/bin/python3"

// key is a (capture, proto, table) count's key.
type key struct{ capture, proto, table string }

// needDask skips the test where the script cannot run: no
// /usr/bin/python3 with distributed, no node with DuckDB.
func needDask(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(python, "-c", "import distributed").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import distributed (apt-get install python3-distributed; .ci/run does): %v %s", python, err, bytes.TrimSpace(out))
	}
	if err := duckdb.Available(); err != nil {
		t.Skip(err)
	}
}

// buildDissect builds the dissect command of this tree into dir.
func buildDissect(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "dissect")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/dissect").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// captureGroup is the shipped captures decoded with one set of flags.
type captureGroup struct {
	flags []string
	files []string
}

// shippedGroups returns pcaps/*.pcap* grouped by the flags their truth
// files say they need (-d with the decode-as rule, --neptune-int16); a
// real VRPN capture has no truth file beside it and needs none.
func shippedGroups(t *testing.T) []captureGroup {
	t.Helper()
	files, _ := filepath.Glob("../pcaps/*.pcap*")
	if len(files) < 10 {
		t.Fatalf("only %d captures in ../pcaps", len(files))
	}
	sort.Strings(files)
	byFlags := map[string]*captureGroup{}
	var out []captureGroup
	var order []string
	for _, f := range files {
		c := dissecttest.ReadCapture(t, f)
		var flags []string
		if c.DecodeAs != "" {
			flags = append(flags, "-d", c.DecodeAs)
		}
		if c.NeptuneInt16 {
			flags = append(flags, "--neptune-int16")
		}
		// One script run per --neptune-int16 setting, with the -d rules
		// of all its captures (fewer runs: the cluster's start is most of
		// a run's time). The JSON side uses the same flags per capture,
		// so the comparison holds whatever the rules do to the others.
		k := fmt.Sprint(c.NeptuneInt16)
		g := byFlags[k]
		if g == nil {
			g = &captureGroup{}
			byFlags[k] = g
			order = append(order, k)
		}
		for i := 0; i < len(flags); i++ {
			if flags[i] == "-d" && !contains(g.flags, flags[i+1]) {
				g.flags = append(g.flags, "-d", flags[i+1])
			}
			if flags[i] == "--neptune-int16" && !contains(g.flags, flags[i]) {
				g.flags = append(g.flags, flags[i])
			}
		}
		g.files = append(g.files, f)
	}
	for _, k := range order {
		out = append(out, *byFlags[k])
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// jsonCounts runs `dissect -o json` on each file and counts its records by
// capture, protocol and lake table: the record's type, as the lake's type
// partition holds it (docs/scale.md: a type declared once per variant,
// HandControl's per role, is one partition).
func jsonCounts(t *testing.T, bin string, flags []string, files []string, into map[key]int64) {
	t.Helper()
	for _, f := range files {
		args := append(append([]string{"-o", "json", "--no-summary"}, flags...), "--", f)
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("dissect %s: %v", strings.Join(args, " "), err)
		}
		countJSON(t, filepath.Base(f), out, into)
	}
}

func countJSON(t *testing.T, capture string, out []byte, into map[key]int64) int {
	t.Helper()
	n := 0
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r struct {
			Proto  *string
			Type   string
			Fields map[string]any
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v: %s", capture, err, line)
		}
		proto := ""
		if r.Proto != nil {
			proto = *r.Proto
		}
		into[key{capture, proto, r.Type}]++
		n++
	}
	return n
}

// lakeCounts counts the lake's rows by capture, protocol and table with
// DuckDB.
func lakeCounts(t *testing.T, lake string) map[key]int64 {
	t.Helper()
	_, rows := duckdb.Query(t, "SELECT capture, coalesce(proto, ''), type, count(*)::VARCHAR FROM read_parquet("+
		duckdb.Quote(filepath.Join(lake, "**", "*.parquet"))+
		", hive_partitioning = true, hive_types_autocast = false, union_by_name = true) GROUP BY ALL")
	out := map[key]int64{}
	for _, r := range rows {
		var n int64
		fmt.Sscan(fmt.Sprint(r[3]), &n)
		out[key{fmt.Sprint(r[0]), fmt.Sprint(r[1]), fmt.Sprint(r[2])}] = n
	}
	return out
}

// lakeFiles returns every file under the lake, relative, with its size.
func lakeFiles(t *testing.T, lake string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(lake, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(lake, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func diffCounts(got, want map[key]int64) string {
	var d []string
	for k, n := range want {
		if got[k] != n {
			d = append(d, fmt.Sprintf("%v: lake %d, json %d", k, got[k], n))
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%v: lake %d, json none", k, n))
		}
	}
	sort.Strings(d)
	return strings.Join(d, "\n")
}

// ingest runs the script and returns its stdout, stderr and exit status.
func ingest(t *testing.T, bin, lake string, files, flags []string) (string, string, int) {
	t.Helper()
	args := append([]string{"dask_ingest.py", "--lake", lake, "--workers", "2", "--dissect", bin}, files...)
	args = append(append(args, "--"), flags...)
	cmd := exec.Command(python, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s: %v", python, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// partID is the script's id for a capture, computed here from its rule
// (docs/scale.md): SHA-256 of the base name, a NUL and the content, 32
// hex digits.
func partID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	h.Write([]byte(filepath.Base(path) + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// TestDaskIngest runs scale/dask_ingest.py with two workers over the
// shipped captures: the lake's DuckDB counts per capture and table equal
// the per-capture -o json records; a second run (with a stale part of an
// earlier run planted) leaves the same files and counts; a truncated
// capture among good ones is named with dissect's error, the status is
// non-zero, its records are not in the lake and the others are.
func TestDaskIngest(t *testing.T) {
	needDask(t)
	tmp := t.TempDir()
	bin := buildDissect(t, tmp)
	lake := filepath.Join(tmp, "lake")
	groups := shippedGroups(t)

	want := map[key]int64{}
	for _, g := range groups {
		jsonCounts(t, bin, g.flags, g.files, want)
		stdout, stderr, code := ingest(t, bin, lake, g.files, g.flags)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		for _, f := range g.files {
			if !strings.Contains(stdout, partID(t, f)) {
				t.Errorf("stdout does not give %s's id %s:\n%s", f, partID(t, f), stdout)
			}
		}
	}
	got := lakeCounts(t, lake)
	if d := diffCounts(got, want); d != "" {
		t.Fatalf("lake counts differ from the JSON records:\n%s", d)
	}
	var total int64
	for _, n := range want {
		total += n
	}
	t.Logf("%d records in %d (capture, proto, table) counts", total, len(want))
	files := lakeFiles(t, lake)
	for _, f := range files {
		if !strings.HasSuffix(f, ".parquet") {
			t.Errorf("left in the lake: %s", f)
		}
	}

	// Rerun: the same files (names) and counts. A part of the first
	// group's first capture that no run of it writes (as if an earlier
	// run had cut it into more parts) is removed by the rerun.
	first := groups[0].files[0]
	id := partID(t, first)
	var mine string
	for _, f := range files {
		if strings.Contains(f, "part-"+id+"-1.parquet") {
			mine = f
			break
		}
	}
	if mine == "" {
		t.Fatalf("no part-%s-1.parquet of %s in the lake", id, first)
	}
	stale := strings.Replace(mine, "-1.parquet", "-99.parquet", 1)
	if b, err := os.ReadFile(filepath.Join(lake, mine)); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(lake, stale), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if d := diffCounts(lakeCounts(t, lake), want); d == "" {
		t.Fatal("the planted stale part does not change the counts: the check below could not fail")
	}
	for _, g := range groups {
		if stdout, stderr, code := ingest(t, bin, lake, g.files, g.flags); code != 0 {
			t.Fatalf("rerun: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		} else if g.files[0] == first && !strings.Contains(stdout, "1 stale parts of an earlier run removed") {
			t.Errorf("rerun does not say it removed the stale part:\n%s", stdout)
		}
	}
	if d := diffCounts(lakeCounts(t, lake), want); d != "" {
		t.Fatalf("rerun changed the counts:\n%s", d)
	}
	if again := lakeFiles(t, lake); strings.Join(again, "\n") != strings.Join(files, "\n") {
		t.Fatalf("rerun changed the files:\n%s\nwere:\n%s", strings.Join(again, "\n"), strings.Join(files, "\n"))
	}

	// A truncated capture among good ones (a copy of the first one, cut
	// inside a packet record: dissect decodes what is before the cut,
	// then fails).
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(tmp, "broken_truncated.pcap")
	if err := os.WriteFile(broken, b[:len(b)*2/5], 0o644); err != nil {
		t.Fatal(err)
	}
	g := groups[0]
	out, _ := exec.Command(bin, append(append([]string{"-o", "json", "--no-summary"}, g.flags...), "--", broken)...).Output()
	if n := countJSON(t, "broken", out, map[key]int64{}); n == 0 {
		t.Fatal("dissect decodes no record of the truncated capture: its absence from the lake would prove nothing")
	}
	stdout, stderr, code := ingest(t, bin, lake, append([]string{broken}, g.files...), g.flags)
	if code == 0 {
		t.Fatalf("exit 0 with a truncated capture\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "FAILED "+broken+": dissect: "+broken+": at byte") ||
		!strings.Contains(stderr, "truncated packet record") {
		t.Errorf("stderr does not name the broken capture with dissect's error:\n%s", stderr)
	}
	t.Logf("with a truncated capture: exit %d, %s", code, strings.TrimSpace(stderr))
	if d := diffCounts(lakeCounts(t, lake), want); d != "" {
		t.Fatalf("with a broken capture, the lake differs (the good ones must be there, the broken one's records not):\n%s", d)
	}
	if again := lakeFiles(t, lake); strings.Join(again, "\n") != strings.Join(files, "\n") {
		t.Fatalf("the broken capture's run changed the files:\n%s\nwere:\n%s", strings.Join(again, "\n"), strings.Join(files, "\n"))
	}
}
