// Command sidebyside measures two builds of dissect on the same command,
// interleaved, so that a change is judged against its base in one period
// (the machine's speed drifts; runs minutes apart are not comparable):
//
//	go run ./internal/sidebyside -a 7438274 -b HEAD -rounds 10 -- -o json -d tcp.port==4000,deltarobot --no-summary d500.pcap
//
// It builds each revision (a commit, a branch, or "." for the working tree)
// with CGO_ENABLED=0 in a temporary worktree, then runs A, B, A, B, ... (B
// first in every other round, so neither always runs on a warm cache
// first), stdout to /dev/null, and reads each child's wall time, CPU time
// (user+sys) and peak RSS from the kernel (wait4's rusage). It prints, per
// build, the median and the range of each, B's medians over A's, and the
// ratio of B's run to A's in the same round: its median and quartiles, and
// in how many rounds B took no longer. A round's two runs are seconds
// apart, so that ratio is steadier than the medians' when the machine's
// speed drifts within the measurement. The first round is a warm-up and
// left out. Nothing is timed by the tests.
//
// Two commands of one build (-o json against -o mcap, say) are compared
// by giving B its own command line:
//
//	go run ./internal/sidebyside -a HEAD -b HEAD -b-args "-o mcap --out /tmp/x.mcap -r d50.pcap" -- -o json --out /tmp/x.json -r d50.pcap
//
// Before every run the file or directory a command writes (its --out)
// is removed and the kernel's dirty pages are written out (sync), so that
// no run pays for the writeback of the one before it: -o json leaves
// ~700 MB of them on the 50 MB capture, which made the next run up to a
// third slower (docs/performance-35-channels.md). --out must name a path that does
// not exist yet: it is the tool's to remove.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

// sample is one run's figures.
type sample struct {
	wall, cpu time.Duration
	rssKB     int64
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("sidebyside", flag.ContinueOnError)
	a := fs.String("a", "", "the base: a revision to build, or a dissect binary's path")
	b := fs.String("b", ".", "the change: a revision, \".\" (the working tree) or a binary's path")
	rounds := fs.Int("rounds", 7, "interleaved rounds, the first a warm-up")
	bArgs := fs.String("b-args", "", "B's dissect arguments (split at spaces) when they are not A's")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmdArgs := [2][]string{fs.Args(), fs.Args()}
	if *bArgs != "" {
		cmdArgs[1] = strings.Fields(*bArgs)
	}
	if *a == "" || len(cmdArgs[0]) == 0 || *rounds < 2 {
		return errors.New("usage: sidebyside -a REV|BINARY [-b REV|BINARY|.] [-rounds N>=2] [-b-args \"ARGS\"] -- DISSECT ARGS...")
	}
	var outs [2]string
	for i := range outs {
		p, err := outPath(cmdArgs[i])
		if err != nil {
			return err
		}
		outs[i] = p
	}
	defer func() {
		for _, p := range outs {
			if p != "" {
				os.RemoveAll(p)
			}
		}
	}()
	tmp, err := os.MkdirTemp("", "sidebyside")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bins := [2]string{}
	for i, rev := range [2]string{*a, *b} {
		if bins[i], err = binary(rev, filepath.Join(tmp, fmt.Sprint(i))); err != nil {
			return fmt.Errorf("%s: %w", rev, err)
		}
	}
	var got [2][]sample
	for r := range *rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			if err := fresh(outs[i]); err != nil {
				return err
			}
			s, err := measure(bins[i], cmdArgs[i])
			if err != nil {
				return err
			}
			if r > 0 {
				got[i] = append(got[i], s)
			}
		}
	}
	fmt.Fprintf(out, "%s, %d rounds interleaved (the first left out): dissect %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"), *rounds-1, strings.Join(cmdArgs[0], " "))
	if *bArgs != "" {
		fmt.Fprintf(out, "B: dissect %s\n", strings.Join(cmdArgs[1], " "))
	}
	fmt.Fprintf(out, "%-10s %-24s %-24s %-20s\n", "", "wall s (median, range)", "CPU s (median, range)", "peak RSS MB")
	var med [2][3]float64
	for i, name := range [2]string{"A " + *a, "B " + *b} {
		w := stat(got[i], func(s sample) float64 { return s.wall.Seconds() })
		c := stat(got[i], func(s sample) float64 { return s.cpu.Seconds() })
		m := stat(got[i], func(s sample) float64 { return float64(s.rssKB) / 1024 })
		med[i] = [3]float64{w[0], c[0], m[0]}
		fmt.Fprintf(out, "%-10s %-24s %-24s %-20s\n", name, fmt.Sprintf("%.3f (%.3f–%.3f)", w[0], w[1], w[2]),
			fmt.Sprintf("%.3f (%.3f–%.3f)", c[0], c[1], c[2]), fmt.Sprintf("%.1f (%.1f–%.1f)", m[0], m[1], m[2]))
	}
	fmt.Fprintf(out, "B/A medians: wall %.3f, CPU %.3f, RSS %.3f\n", med[1][0]/med[0][0], med[1][1]/med[0][1], med[1][2]/med[0][2])
	for _, what := range []struct {
		name string
		f    func(sample) float64
	}{{"wall", func(s sample) float64 { return s.wall.Seconds() }}, {"CPU", func(s sample) float64 { return s.cpu.Seconds() }}} {
		q, le := paired(got[0], got[1], what.f)
		fmt.Fprintf(out, "B/A per round, %s: median %.3f (quartiles %.3f–%.3f); B no longer in %d of %d rounds\n",
			what.name, q[1], q[0], q[2], le, len(got[0]))
	}
	return nil
}

// paired returns the quartiles (first, median, third) of f(b[i])/f(a[i]),
// the ratios of the runs of one round, and the number of rounds in which
// b's was no greater than a's.
func paired(a, b []sample, f func(sample) float64) ([3]float64, int) {
	r := make([]float64, len(a))
	le := 0
	for i := range a {
		r[i] = f(b[i]) / f(a[i])
		if r[i] <= 1 {
			le++
		}
	}
	slices.Sort(r)
	at := func(p float64) float64 { // linear between the closest ranks
		x := p * float64(len(r)-1)
		i := int(x)
		if i+1 >= len(r) {
			return r[len(r)-1]
		}
		return r[i] + (x-float64(i))*(r[i+1]-r[i])
	}
	return [3]float64{at(0.25), at(0.5), at(0.75)}, le
}

// outPath returns the path args give --out ("--out P" or "--out=P"), or
// "" when they give none; an error when it exists already.
func outPath(args []string) (string, error) {
	p := ""
	for i, a := range args {
		switch {
		case a == "--out" && i+1 < len(args):
			p = args[i+1]
		case strings.HasPrefix(a, "--out="):
			p = strings.TrimPrefix(a, "--out=")
		}
	}
	if p == "" {
		return "", nil
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("--out %s exists: give a path that does not, which sidebyside removes before each run and at the end", p)
	}
	return p, nil
}

// fresh removes what the last run wrote to out (if any) and has the
// kernel write its dirty pages out before the next run starts.
func fresh(out string) error {
	if out != "" {
		if err := os.RemoveAll(out); err != nil {
			return err
		}
	}
	syscall.Sync()
	return nil
}

// binary returns a dissect binary for rev: rev itself when it is a file,
// else a build of that revision (the working tree for ".") in dir.
func binary(rev, dir string) (string, error) {
	if st, err := os.Stat(rev); err == nil && !st.IsDir() {
		return filepath.Abs(rev)
	}
	out := filepath.Join(dir, "dissect")
	src := "."
	if rev != "." {
		src = filepath.Join(dir, "src")
		if b, err := exec.Command("git", "worktree", "add", "--detach", src, rev).CombinedOutput(); err != nil {
			return "", fmt.Errorf("git worktree add: %v: %s", err, b)
		}
		defer exec.Command("git", "worktree", "remove", "--force", src).Run()
	}
	build := exec.Command("go", "build", "-o", out, "./cmd/dissect")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, b)
	}
	return out, nil
}

// measure runs bin with args once, stdout to /dev/null.
func measure(bin string, args []string) (sample, error) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return sample{}, err
	}
	defer devnull.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout = devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{}, errors.New("no rusage on this system")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu, rssKB: ru.Maxrss}, nil
}

// stat returns the median, minimum and maximum of f over ss.
func stat(ss []sample, f func(sample) float64) [3]float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return [3]float64{med, v[0], v[n-1]}
}
