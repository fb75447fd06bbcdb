// Package doctext reads the manual (README.md and the pages under docs/)
// for the tests that run its commands and snippets, so that what the
// manual shows cannot drift from what the code does. A test names the
// page by its path from the repository's root, and the text before the
// block it wants (a heading, or a phrase of the page).
//
// It lives in internal/ so that cmd, edge and e2e tests can all import it.
package doctext

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ErrNoRoot is returned when no go.mod is found above the working
// directory.
var ErrNoRoot = errors.New("doctext: no go.mod above the working directory")

// Root returns the repository's root: the nearest directory at or above
// the working directory (a test's package) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("doctext: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRoot
		}
		dir = parent
	}
}

// Read returns the page at path (such as "docs/configuration.md") from
// the repository's root, or fails t.
func Read(t testing.TB, path string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatalf("the manual's page: %v", err)
	}
	return string(data)
}

// Block returns the first fenced code block of lang (the word after
// the opening ```) after marker in the page at path, or fails t naming
// what it looked for.
func Block(t testing.TB, path, marker, lang string) string {
	t.Helper()
	block, err := Find(Read(t, path), marker, lang)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return block
}

// Find returns the first fenced code block of lang after marker in doc.
func Find(doc, marker, lang string) (string, error) {
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		return "", fmt.Errorf("doctext: no %q", marker)
	}
	_, block, ok := strings.Cut(rest, "```"+lang+"\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		return "", fmt.Errorf("doctext: no %s block after %q", lang, marker)
	}
	return block, nil
}
