package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/internal/doctext"
)

// configPage is the manual's configuration reference.
const configPage = "docs/configuration.md"

// configBlock is the yaml block of the configuration reference: every
// key, with its default.
func configBlock(t *testing.T) string {
	t.Helper()
	return doctext.Block(t, configPage, "# Configuration reference\n", "yaml")
}

// TestDocsConfigReference loads the configuration reference of the
// manual, so the documented keys and defaults cannot drift from the code.
func TestDocsConfigReference(t *testing.T) {
	cfg := edgecmdtest.Config(t, configBlock(t)) // loaded and validated, or the test fails
	opts, err := cfg.ServerOptions()
	if err != nil {
		t.Fatalf("%s: %v", configPage, err)
	}
	if len(opts.Apps) != 1 || opts.Apps[0].Key != "demo" || opts.Apps[0].JWT == nil {
		t.Fatalf("%s built apps %+v", configPage, opts.Apps)
	}
	if got := opts.Apps[0].ChannelLimit(); got != app.DefaultMaxChannels {
		t.Fatalf("%s: max_channels %d, want the default %d", configPage, got, app.DefaultMaxChannels)
	}
	if _, ok := opts.Apps[0].Role("admin"); !ok {
		t.Fatalf("%s lost the admin role", configPage)
	}
}

// mdLink is a Markdown link target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdPath is a file named in code in the docs with a directory, such as
// `shared/rtm/PROTOCOL.md` or `../shared/PROTOCOL.md`.
var mdPath = regexp.MustCompile("`((?:\\.\\./|[\\w.-]+/)[\\w./-]*\\.md)`")

// headingSlug is the anchor GitHub gives a heading: lower case, spaces to
// dashes, punctuation other than dashes and underscores dropped.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the heading anchors of a Markdown file.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	inCode := false
	for line := range strings.Lines(doc) {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if h, ok := strings.CutPrefix(line, "#"); ok && !inCode {
			out[headingSlug(strings.TrimLeft(h, "#"))] = true
		}
	}
	return out
}

// TestDocLinksResolve checks every relative link, and every file path
// the docs name, in the repository's Markdown files: the file exists, and
// the #anchor is a heading of it.
func TestDocLinksResolve(t *testing.T) {
	root := "../.."
	var docs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) < 3 {
		t.Fatalf("found only %v", docs)
	}
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			if u := m[1]; !strings.Contains(u, "://") && !strings.HasPrefix(u, "mailto:") {
				targets = append(targets, u)
			}
		}
		for _, m := range mdPath.FindAllStringSubmatch(string(data), -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
				if rel, err := filepath.Rel(root, path); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s: %q is outside the repository", doc, target)
					continue
				}
				if _, err := os.Stat(path); err != nil {
					// A path in code may be from the repository's root.
					if _, rerr := os.Stat(filepath.Join(root, file)); rerr != nil {
						t.Errorf("%s: %q does not resolve: %v", doc, target, err)
						continue
					}
					path = filepath.Join(root, file)
				}
			}
			if anchor == "" {
				continue
			}
			body, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s: %q: %v", doc, target, err)
				continue
			}
			if !anchors(string(body))[anchor] {
				t.Errorf("%s: %q: no heading #%s in %s", doc, target, anchor, path)
			}
		}
	}
}

// TestDocsPagesReachable checks that every page under docs/ can be found
// from README.md by following relative links, so that no page of the
// manual is left where a reader cannot get to it.
func TestDocsPagesReachable(t *testing.T) {
	root := "../.."
	seen := map[string]bool{}
	queue := []string{filepath.Join(root, "README.md")}
	for len(queue) > 0 {
		doc := queue[0]
		queue = queue[1:]
		if seen[doc] {
			continue
		}
		seen[doc] = true
		data, err := os.ReadFile(doc)
		if err != nil {
			continue // TestDocLinksResolve reports links that do not resolve
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			file, _, _ := strings.Cut(m[1], "#")
			if file != "" && strings.HasSuffix(file, ".md") && !strings.Contains(file, "://") {
				queue = append(queue, filepath.Join(filepath.Dir(doc), file))
			}
		}
	}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") && !seen[path] {
			t.Errorf("%s: no link leads to it from README.md", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// yamlKeys returns the yaml keys of t's fields, and of the structs they
// hold (through pointers, slices and maps), each with its path.
func yamlKeys(t reflect.Type, path string, out map[string]string) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		yamlKeys(t.Elem(), path, out)
		return
	case reflect.Struct:
	default:
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		p := path
		if name != "" {
			p = strings.TrimPrefix(path+"."+name, ".")
			out[p] = name
		}
		yamlKeys(f.Type, p, out)
	}
}

// TestDocsConfigKeysDocumented checks that the configuration reference
// shows every key the config file takes, so a key added to the code
// cannot be left out of the manual.
func TestDocsConfigKeysDocumented(t *testing.T) {
	block := configBlock(t)
	keys := map[string]string{}
	yamlKeys(reflect.TypeFor[edgecmd.Config](), "", keys)
	if len(keys) < 50 {
		t.Fatalf("found only %d keys in edgecmd.Config: %v", len(keys), keys)
	}
	for path, name := range keys {
		if !regexp.MustCompile(`(^|[\s{,#-])` + regexp.QuoteMeta(name) + `:`).MatchString(block) {
			t.Errorf("%s does not show the key %s", configPage, path)
		}
	}
}
