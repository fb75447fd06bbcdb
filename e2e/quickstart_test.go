package e2e

// The README's quick start, followed as a new user does: its own
// commands, run against the edge `make run` starts, with the demo chat
// open in Chromium.

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// quickStart is what the README's quick start tells a user to run and
// shows them.
type quickStart struct {
	sub, pub []string // arguments after ./bin/sluice
	output   string   // the line it shows sub printing
	room     string   // the chat room it names (/chat.html#room)
}

// readQuickStart reads the quick start section of the README.
func readQuickStart(t *testing.T) quickStart {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Quick start\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if !ok {
		t.Fatal("README has no Quick start section")
	}
	var qs quickStart
	for line := range strings.Lines(section) {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "./bin/sluice sub "):
			qs.sub = shellWords(t, strings.TrimPrefix(line, "./bin/sluice "))
		case strings.HasPrefix(line, "./bin/sluice pub "):
			qs.pub = shellWords(t, strings.TrimPrefix(line, "./bin/sluice "))
		case strings.HasPrefix(line, `{"position":"`):
			qs.output = line
		}
	}
	if m := regexp.MustCompile("`/chat.html#(\\w+)`").FindStringSubmatch(section); m != nil {
		qs.room = m[1]
	}
	if qs.sub == nil || qs.pub == nil || qs.output == "" || qs.room == "" {
		t.Fatalf("the quick start lacks a sub or pub command, sub's output or the chat room: %+v", qs)
	}
	return qs
}

// shellWords splits a command line as sh does for the quick start's
// commands: words, 'single quotes', and a # comment.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			w.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == '#' && !inWord:
			return words // a comment to the end of the line
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// positionField is the position in a line sub prints.
var positionField = regexp.MustCompile(`^\{"position":"(\d+:\d+)",`)

// TestQuickStart follows the README's quick start: sub and pub as
// written there, against the demo edge with its chat room open in
// Chromium. What pub publishes shows in the room, sub prints it as the
// README shows, with the position pub printed; what the room says, sub
// prints too.
func TestQuickStart(t *testing.T) {
	qs := readQuickStart(t)
	e := startDemoEdge(t)
	b := startChrome(t)
	page := chatOpen(t, b, e, qs.room, "carol")
	sub := startProcess(t, e.env(), qs.sub...)

	// sub says nothing once subscribed: publish until it prints, each
	// publish a process of its own, as a user would.
	var published []string
	deadline := time.Now().Add(20 * time.Second)
	for sub.stdout.String() == "" {
		if time.Now().After(deadline) {
			t.Fatalf("sub printed nothing after %d publishes", len(published))
		}
		pub := startProcess(t, e.env(), qs.pub...)
		if code := pub.exitCode(t, 20*time.Second); code != 0 {
			t.Fatalf("%s exited %d: %s", pub.name, code, pub.stderr.String())
		}
		pos, err := rtm.ParsePosition(strings.TrimSpace(pub.stdout.String()))
		if err != nil {
			t.Fatalf("%s printed %q, want a position", pub.name, pub.stdout.String())
		}
		published = append(published, pos.String())
		poll := time.Now().Add(300 * time.Millisecond)
		for sub.stdout.String() == "" && time.Now().Before(poll) {
			select {
			case <-sub.done:
				t.Fatalf("sub exited: %v", sub.err)
			case <-time.After(5 * time.Millisecond): // polling sub's output
			}
		}
	}
	first, _, _ := strings.Cut(sub.stdout.String(), "\n")
	m := positionField.FindStringSubmatch(first)
	if m == nil || !strings.Contains(strings.Join(published, " "), m[1]) {
		t.Fatalf("sub printed %q, want the position of one of the messages pub published (%v)", first, published)
	}
	if want := positionField.ReplaceAllString(qs.output, `{"position":"`+m[1]+`",`); first != want {
		t.Errorf("sub printed %s, the README shows %s", first, qs.output)
	}

	var text string
	for _, a := range qs.pub[1:] {
		if t := regexp.MustCompile(`"text":"([^"]*)"`).FindStringSubmatch(a); t != nil {
			text = t[1]
		}
	}
	chatWait(page, text)

	chatSay(page, "hi from the page")
	poll.Until(t, "sub to print what the page said", func() bool {
		return strings.Contains(sub.stdout.String(), `"text":"hi from the page"`)
	})
	if !strings.Contains(sub.stdout.String(), `"user":"carol"`) {
		t.Errorf("sub printed %q, want carol's message", sub.stdout.String())
	}
}
