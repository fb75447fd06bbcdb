package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/doctext"
	"github.com/sluicehq/sluice/internal/poll"
)

// docsSnippet is the manual's browser example: the first html block of
// docs/browser.md.
func docsSnippet(t *testing.T) string {
	t.Helper()
	return doctext.Block(t, "docs/browser.md", "# Browser client\n", "html")
}

// TestBrowserDocsSnippet runs the manual's browser example as it is,
// pointed at a test edge, in a page of another origin: its state
// listener hears "connecting" then "connected", and its subscription the
// message it publishes.
func TestBrowserDocsSnippet(t *testing.T) {
	b := startChrome(t)
	e := startCmdEdge(t, "") // the default edge, app "demo", as the page assumes
	snippet := docsSnippet(t)
	if !strings.Contains(snippet, "127.0.0.1:8080") {
		t.Fatalf("docs/browser.md's snippet does not name the edge of `make run`:\n%s", snippet)
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
