package docs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A docCommand is one command shown in a document: a line of a ```sh
// block (continuation lines joined, the trailing comment dropped), or the
// first line of a plain ``` block that starts with "$ ", whose other lines
// are the output the document shows for it.
type docCommand struct {
	file string // README.md, docs/live.md, ...
	line int    // 1-based, of the command's first line
	text string
	// shown is the output the document shows ($ blocks); nil: none.
	shown []string
}

func (c docCommand) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// readCommands returns the commands of the named Markdown files, relative
// to root.
func readCommands(root string, files []string) ([]docCommand, error) {
	var all []docCommand
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		all = append(all, commandsOf(f, string(b))...)
	}
	return all, nil
}

// commandsOf parses one document.
func commandsOf(file, text string) []docCommand {
	var out []docCommand
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		info, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		start := i + 1
		end := start
		for end < len(lines) && !strings.HasPrefix(lines[end], "```") {
			end++
		}
		body := lines[start:end]
		i = end
		switch strings.TrimSpace(info) {
		case "sh":
			out = append(out, shellCommands(file, start+1, body)...)
		case "":
			if len(body) > 0 && strings.HasPrefix(body[0], "$ ") {
				out = append(out, promptCommand(file, start+1, body))
			}
		}
	}
	return out
}

// shellCommands splits a ```sh block into its commands; first is the
// 1-based line number of body[0].
func shellCommands(file string, first int, body []string) []docCommand {
	var out []docCommand
	for j := 0; j < len(body); j++ {
		text, n := joinContinued(body[j:])
		line := first + j
		j += n - 1
		text = strings.TrimSpace(stripComment(text))
		if text == "" {
			continue
		}
		out = append(out, docCommand{file: file, line: line, text: text})
	}
	return out
}

// promptCommand is a "$ command" block: the command, then its output.
func promptCommand(file string, first int, body []string) docCommand {
	body[0] = strings.TrimPrefix(body[0], "$ ")
	text, n := joinContinued(body)
	shown := []string{}
	for _, l := range body[n:] {
		shown = append(shown, strings.TrimRight(l, " \t"))
	}
	return docCommand{file: file, line: first, text: strings.TrimSpace(stripComment(text)), shown: shown}
}

// joinContinued joins lines ending in a backslash with the next; it
// returns the command and how many lines it took.
func joinContinued(lines []string) (string, int) {
	var b strings.Builder
	for n, l := range lines {
		if c, ok := strings.CutSuffix(strings.TrimRight(l, " \t"), `\`); ok {
			b.WriteString(c)
			b.WriteByte(' ')
			continue
		}
		b.WriteString(l)
		return b.String(), n + 1
	}
	return b.String(), len(lines)
}

// stripComment drops a shell comment: a # at the start of a word, outside
// quotes.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i]
		}
	}
	return s
}

// matchShown reports the first line the document shows that the output
// does not have, in order: each shown line must equal a line of the
// output (trailing blanks aside) after the one the previous matched; a
// line "..." stands for any lines.
func matchShown(shown []string, got string) (missing string, ok bool) {
	out := strings.Split(got, "\n")
	k := 0
	for _, want := range shown {
		if want == "..." || want == "" {
			continue
		}
		for k < len(out) && strings.TrimRight(out[k], " \t") != want {
			k++
		}
		if k == len(out) {
			return want, false
		}
		k++
	}
	return "", true
}
