// Package foxstudio runs a real Foxglove Studio for tests of -o foxglove:
// Foxglove Studio 1.48 as npm @foxglove/studio-base ships it (a built UMD
// bundle exporting App and FoxgloveWebSocketDataSourceFactory), mounted
// with React 17 on page/index.html, in Debian's headless chromium driven
// by drive.mjs through puppeteer-core. Studio connects by its deep link
// (?ds=foxglove-websocket&ds.url=ws://...), or opens an MCAP file as its
// "Open local file" does (Options.File) and plays it once its panels
// are shown; it opens with no panels, and
// switches to the layout "panels" of layout.json (a 3D panel following
// "world", a Plot of /deltarobot/0/actuator_position.fields.z, Raw
// Messages of /deltarobot/0/pong and /deltarobot/0/curve) a chosen delay
// after it has connected. The report says what each panel was handed by
// Studio's message pipeline, the points the Plot draws, the 3D panel's
// frames and errors, and the panels' text, read from the running app.
//
// `npm ci --prefix internal/foxstudio` installs the pinned packages and
// apt-get install chromium the browser (.ci/run does both); without
// them, [Start] skips the test and says what to run.
package foxstudio

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dissect-tools/dissect/internal/childtest"
	"github.com/dissect-tools/dissect/internal/nodetest"
)

// Report is what drive.mjs saw, read from the app once its panels had
// what was expected (or it timed out).
type Report struct {
	TimedOut bool    `json:"timedOut"`
	Error    *string `json:"error"`
	Waited   struct {
		ConnectToShowMs int64 `json:"connectToShowMs"` // connected → panels shown
		ShowToDoneMs    int64 `json:"showToDoneMs"`    // panels shown → report
	} `json:"waited"`
	Panels    []panelText `json:"panels"`
	Connected string      `json:"connected"` // the player's presence, PRESENT once connected
	// The player's start and end time: the time axis of every panel
	// (decimal nanoseconds since 1970).
	StartTime string `json:"startTime"`
	EndTime   string `json:"endTime"`
	Seeks     int    `json:"seeks"` // times the player's clock went back (Studio then resets its panels)
	Topics    []struct {
		Name       string `json:"name"`
		SchemaName string `json:"schemaName"`
	} `json:"topics"`
	TopicStats map[string]int `json:"topicStats"` // messages the player received per topic
	Problems   []struct {
		Severity string  `json:"severity"`
		Message  string  `json:"message"`
		Tip      *string `json:"tip"`
	} `json:"problems"`
	// Subscribers are the panels' subscriptions to the message pipeline
	// (a panel may hold more than one).
	Subscribers []struct {
		ID     string   `json:"id"`
		Topics []string `json:"topics"`
		// Received counts the distinct messages handed to the subscriber,
		// per topic; SinceSeek those since the player's clock last went
		// back (what the panel shows).
		Received  map[string]int `json:"received"`
		SinceSeek map[string]int `json:"sinceSeek"`
	} `json:"subscribers"`
	Plots []struct {
		Paths    []string `json:"paths"`
		XAxisVal string   `json:"xAxisVal"`
		Datasets []struct {
			Label  string  `json:"label"`
			Points []point `json:"points"`
		} `json:"datasets"`
	} `json:"plots"`
	ThreeDees []struct {
		Frames        []string `json:"frames"`
		RenderFrameID *string  `json:"renderFrameId"`
		FollowFrameID *string  `json:"followFrameId"`
		Errors        []struct {
			Path    string `json:"path"`
			ID      string `json:"id"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"threeDees"`
	Console []string `json:"console"` // the page's warnings and errors
}

// point is a point a Plot draws.
type point struct {
	X           float64 `json:"x"` // seconds since the player's start time
	Y           float64 `json:"y"`
	ReceiveTime string  `json:"receiveTime"` // decimal nanoseconds since 1970
}

// panelText is a panel as Studio shows it.
type panelText struct {
	Panel      string `json:"panel"`      // its id in the layout, e.g. RawMessages!pong
	Text       string `json:"text"`       // its text as shown
	Screenshot string `json:"screenshot"` // with Options.Out
}

// Options say what to connect to and what to wait for.
type Options struct {
	URL  string // ws://HOST:PORT
	File string // or an MCAP file to open
	// Delay: how long after connecting the panels are shown (and
	// subscribe).
	Delay time.Duration
	// Expect: messages per topic that a panel must have been handed
	// before the report is taken (the Plot must draw as many points of
	// its topic); with "/tf" the 3D panel must also render in the frame
	// it follows.
	Expect map[string]int
	// Timeout: how long Studio has to connect and its panels to fill,
	// from the page's load.
	Timeout time.Duration
	Out     string // where the screenshots go
	// Hold: the report waits for [Studio.Release] instead of Expect's
	// counts.
	Hold bool
}

// Studio is a running drive.mjs.
type Studio struct {
	p     *childtest.Process
	shown chan struct{}

	mu       sync.Mutex
	plotN    int    // the first Plot's points, as drive.mjs last said
	plotLast string // and its last value
}

// Available reports why Studio cannot run here (nil when it can).
func Available() error {
	_, _, _, err := setup()
	return err
}

func setup() (node, dir, chromium string, err error) {
	node, dir, err = nodetest.Find("internal/foxstudio", "Foxglove Studio runs in Chromium, driven from Node by puppeteer-core",
		"@foxglove/studio-base", "puppeteer-core", "react", "react-dom")
	if err != nil {
		return "", "", "", err
	}
	chromium, err = exec.LookPath("chromium")
	if err != nil {
		return "", "", "", fmt.Errorf("chromium is not installed (Foxglove Studio runs in it headless): apt-get install chromium")
	}
	return node, dir, chromium, nil
}

// ModuleRoot is the module's root directory, once Studio can run (it
// skips the test otherwise).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	_, dir, _, err := setup()
	if err != nil {
		t.Skip(err.Error())
	}
	return filepath.Dir(filepath.Dir(dir))
}

// Start opens Studio on o.URL; it skips the test where node, the npm
// packages or chromium are missing.
func Start(t testing.TB, o Options) *Studio {
	t.Helper()
	node, dir, chromium, err := setup()
	if err != nil {
		t.Skip(err.Error())
	}
	source := []string{"--url", o.URL}
	if o.File != "" {
		source = []string{"--file", o.File}
	}
	args := []string{filepath.Join(dir, "drive.mjs"), source[0], source[1], "--chromium", chromium,
		"--delay", strconv.FormatFloat(o.Delay.Seconds(), 'f', -1, 64),
		"--timeout", strconv.FormatFloat(o.Timeout.Seconds(), 'f', -1, 64)}
	topics := make([]string, 0, len(o.Expect))
	for topic := range o.Expect {
		topics = append(topics, topic)
	}
	sort.Strings(topics)
	for _, topic := range topics {
		args = append(args, "--expect", fmt.Sprintf("%s=%d", topic, o.Expect[topic]))
	}
	if o.Out != "" {
		args = append(args, "--out", o.Out)
	}
	if o.Hold {
		args = append(args, "--hold")
	}
	s := &Studio{shown: make(chan struct{})}
	once := sync.Once{}
	s.p = childtest.Start(t, childtest.Options{Line: func(line string) {
		if _, p, ok := strings.Cut(line, ": plot "); ok {
			n, last, _ := strings.Cut(p, " ")
			s.mu.Lock()
			s.plotN, _ = strconv.Atoi(n)
			s.plotLast = last
			s.mu.Unlock()
		}
		if strings.HasSuffix(line, ": panels subscribed") {
			once.Do(func() { close(s.shown) })
		}
	}}, node, args...)
	return s
}

// Stderr is what drive.mjs said on stderr so far.
func (s *Studio) Stderr() string { return s.p.Stderr() }

// WaitShown waits until Studio has connected, shown its panels and they
// have subscribed to the expected topics (those not yet advertised
// included, for the Plot and Raw Messages panels, which take a topic by
// name; a 3D panel subscribes only to topics it has seen).
func (s *Studio) WaitShown(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case <-s.shown:
	case <-s.p.Ended():
		t.Fatalf("drive.mjs ended before the panels subscribed: %v\n%s%s", s.p.Err(), s.Stderr(), s.p.Stdout())
	case <-time.After(timeout):
		t.Fatalf("Studio had not connected and its panels subscribed after %v:\n%s", timeout, s.Stderr())
	}
}

// Plot is what drive.mjs last said of the first Plot: how many points it
// draws, and the last one's value (as JavaScript writes it; "none").
func (s *Studio) Plot() (points int, last string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.plotN, s.plotLast
}

// Release lets a Studio started with Options.Hold make its report.
func (s *Studio) Release() { s.p.Stdin.Close() }

// Wait waits for drive.mjs's report.
func (s *Studio) Wait(t testing.TB, timeout time.Duration) *Report {
	t.Helper()
	select {
	case <-s.p.Ended():
	case <-time.After(timeout):
		t.Fatalf("drive.mjs gave no report in %v:\n%s", timeout, s.Stderr())
	}
	var r Report
	if err := json.Unmarshal(s.p.Stdout(), &r); err != nil {
		t.Fatalf("drive.mjs: %v; report: %v: %.500s\n%s", s.p.Err(), err, s.p.Stdout(), s.Stderr())
	}
	if r.Error != nil {
		t.Fatalf("drive.mjs: %s\n%s", *r.Error, s.Stderr())
	}
	return &r
}
