package doctext_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/doctext"
)

// cell matches a table cell that is one backticked name.
var cell = regexp.MustCompile("^`([^`]+)`$")

// TestArchitectureNamesExist checks that every function and lock
// docs/architecture.md names in its tables is declared in the file the
// row names: the page cannot drift from the code.
func TestArchitectureNamesExist(t *testing.T) {
	const page = "docs/architecture.md"
	text := doctext.Read(t, page)
	root, err := doctext.Root()
	if err != nil {
		t.Fatal(err)
	}
	decls := map[string]map[string]bool{} // file: its declared names
	checked := 0
	for _, line := range strings.Split(text, "\n") {
		file, names := row(line)
		if file == "" {
			continue
		}
		if decls[file] == nil {
			decls[file] = declared(t, filepath.Join(root, filepath.FromSlash(file)))
		}
		for _, n := range names {
			if !decls[file][n] {
				t.Errorf("%s names %s in %s, which declares no such function or lock", page, n, file)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("%s: only %d names checked; the tables are not where the test looks", page, checked)
	}
}

// row returns the Go file a table row names, and the functions or locks
// it names beside it ("" for any other line).
func row(line string) (string, []string) {
	if !strings.HasPrefix(line, "|") {
		return "", nil
	}
	var file string
	var names []string
	for _, c := range strings.Split(line, "|") {
		m := cell.FindStringSubmatch(strings.TrimSpace(c))
		switch {
		case m == nil:
		case strings.HasSuffix(m[1], ".go"):
			file = m[1]
		default:
			names = append(names, m[1])
		}
	}
	if file == "" {
		return "", nil
	}
	return file, names
}

// declared returns the names a Go file declares, as the page writes
// them: F for a function, (*T).M or T.M for a method, T.f for a struct
// field.
func declared(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			names[funcName(d)] = true
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok {
					continue
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					for _, n := range fld.Names {
						names[ts.Name.Name+"."+n.Name] = true
					}
				}
			}
		}
	}
	return names
}

// funcName writes a function's name as the page does.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	switch r := d.Recv.List[0].Type.(type) {
	case *ast.StarExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			return "(*" + id.Name + ")." + d.Name.Name
		}
	case *ast.Ident:
		return r.Name + "." + d.Name.Name
	}
	return d.Name.Name
}
