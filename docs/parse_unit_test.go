package docs_test

import (
	"reflect"
	"testing"
)

func TestCommandsOf(t *testing.T) {
	doc := "text\n" +
		"```sh\n" +
		"dissect a.pcap   # a comment\n" +
		"# a whole-line comment\n" +
		"\n" +
		"dissect -Y 'x # not a comment' \\\n" +
		"    b.pcap\n" +
		"```\n" +
		"```go\n" +
		"dissect not.run\n" +
		"```\n" +
		"```\n" +
		"$ dissect -q c.pcap\n" +
		"line one\n" +
		"...\n" +
		"```\n" +
		"```\n" +
		"output without a command\n" +
		"```\n"
	got := commandsOf("d.md", doc)
	want := []docCommand{
		{file: "d.md", line: 3, text: "dissect a.pcap"},
		{file: "d.md", line: 6, text: "dissect -Y 'x # not a comment'      b.pcap"},
		{file: "d.md", line: 13, text: "dissect -q c.pcap", shown: []string{"line one", "..."}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

func TestMatchShown(t *testing.T) {
	out := "head\nrow 1   \nrow 2\nrow 3\n"
	for _, c := range []struct {
		shown []string
		ok    bool
	}{
		{[]string{"row 1", "row 3"}, true},
		{[]string{"head", "...", "row 3"}, true},
		{[]string{"row 3", "row 1"}, false}, // out of order
		{[]string{"row 4"}, false},
		{[]string{"row"}, false}, // a whole line, not a prefix
	} {
		if _, ok := matchShown(c.shown, out); ok != c.ok {
			t.Errorf("matchShown(%q) = %v, want %v", c.shown, ok, c.ok)
		}
	}
}

func TestRewrite(t *testing.T) {
	w := &workspace{dir: "/ws"}
	for _, c := range []struct {
		in   string
		live bool
		want string
	}{
		{"go run ./cmd/dissect protocols", false, "dissect protocols"},
		{"sudo dissect -i eth0 -q", true, "dissect -a duration:2 -i lo -q"},
		{"go run ./internal/testenc/mkpcaps -out pcaps/", false, "go run ./internal/testenc/mkpcaps -out /ws/out/pcaps/"},
		{"CGO_ENABLED=0 go build -o dissect ./cmd/dissect", false, "CGO_ENABLED=0 go build -o /ws/dissect ./cmd/dissect"},
		{"go test -run TestX -v ./a/", false, "go test -list TestX ./a/ | tee /dev/stderr | grep -qE '^(Test|Fuzz|Benchmark|Example)'"},
		{"dissect -o parquet --out DIR --part-id ID DISSECT_FLAGS -- CAPTURE", false, "dissect -o parquet --out DIR --part-id docs-test -- capture.pcap"},
	} {
		if got := rewrite(c.in, w, c.live); got != c.want {
			t.Errorf("rewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
