package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
)

// readmeSnippet is the README's browser example: the html block of its
// "Browser" section.
func readmeSnippet(t *testing.T) string {
	t.Helper()
	return readmeBlock(t, "\n## Browser\n", "html")
}

// readmeBlock returns the first lang code block after marker in the
// README.
func readmeBlock(t *testing.T, marker, lang string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	_, block, ok2 := strings.Cut(rest, "```"+lang+"\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README: no %s block after %q", lang, marker)
	}
	return block
}

// TestBrowserReadmeSnippet runs the README's browser example as it is,
// pointed at a test edge, in a page of another origin: its state
// listener hears "connecting" then "connected", and its subscription the
// message it publishes.
func TestBrowserReadmeSnippet(t *testing.T) {
	b := startChrome(t)
	e := startCmdEdge(t, "") // the default edge, app "demo", as the README assumes
	snippet := readmeSnippet(t)
	if !strings.Contains(snippet, "127.0.0.1:8080") {
		t.Fatalf("the README snippet does not name the edge of `make run`:\n%s", snippet)
	}
	page := "<!doctype html><meta charset=utf-8><title>readme</title><link rel=icon href=\"data:,\">\n" +
		strings.ReplaceAll(snippet, "127.0.0.1:8080", strings.TrimPrefix(e.url, "ws://"))
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, root)
	p := b.newTab(t, "ws"+strings.TrimPrefix(s.URL, "http"))
	p.open("/")
	var logs []string
	poll.Until(t, "the snippet's subscription to log its message", func() bool {
		logs = p.consoleTexts()
		return slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "hi") })
	})
	connecting, connected := slices.Index(logs, "connecting"), slices.Index(logs, "connected")
	message := slices.IndexFunc(logs, func(l string) bool { return strings.Contains(l, "hi") })
	if connecting < 0 || connected < connecting || message < connected {
		t.Fatalf("console %q: want connecting, connected, then the message", logs)
	}
	if errs := p.consoleErrors(); len(errs) > 0 {
		t.Fatalf("the snippet's page reported errors: %v", errs)
	}
}
