package v1alpha1_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// apiConst is a Condition or Reason constant of the API package.
type apiConst struct {
	name, value, file, doc string
}

// conditionConsts reads the package's Condition* and Reason* constants from its source.
func conditionConsts(t *testing.T) []apiConst {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []apiConst
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") || strings.HasPrefix(path, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				doc := vs.Doc
				if doc == nil && !gd.Lparen.IsValid() {
					doc = gd.Doc
				}
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Reason") && !strings.HasPrefix(n.Name, "Condition") {
						continue
					}
					c := apiConst{name: n.Name, file: path, doc: doc.Text()}
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
							c.value, _ = strconv.Unquote(lit.Value)
						}
					}
					out = append(out, c)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("found no condition constants")
	}
	return out
}

// usedIdents collects every identifier the module's production code (no tests) refers to,
// outside the declarations of the API package's constants themselves.
func usedIdents(t *testing.T) map[string]bool {
	t.Helper()
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	used := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "bin" || name == "vendor" || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		declared := map[*ast.Ident]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if vs, ok := n.(*ast.ValueSpec); ok {
				for _, id := range vs.Names {
					declared[id] = true
				}
			}
			if id, ok := n.(*ast.Ident); ok && !declared[id] {
				used[id.Name] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return used
}

// TestConditionReasonsDocumentedAndUsed keeps conditions.go the one place where a condition's
// reasons are found: every reason is declared there with a doc comment that says when it is
// set, is set somewhere in the operator, and is in the table of docs/conditions.md.
func TestConditionReasonsDocumentedAndUsed(t *testing.T) {
	consts := conditionConsts(t)
	used := usedIdents(t)
	table, err := os.ReadFile(filepath.Join("..", "..", "docs", "conditions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consts {
		t.Run(c.name, func(t *testing.T) {
			isReason := strings.HasPrefix(c.name, "Reason")
			if isReason && c.file != "conditions.go" {
				t.Errorf("%s is declared in %s; declare it in conditions.go, in the block of the condition it is set on", c.name, c.file)
			}
			if !strings.HasPrefix(c.doc, c.name+" ") {
				t.Errorf("%s has no doc comment starting with its name that says when it is set", c.name)
			}
			if !used[c.name] {
				t.Errorf("%s is not used by the operator; remove it or set it", c.name)
			}
			if c.value == "" {
				t.Fatalf("%s is not a string literal", c.name)
			}
			if !strings.Contains(string(table), "`"+c.value+"`") {
				t.Errorf("docs/conditions.md does not list `%s` (%s)", c.value, c.name)
			}
		})
	}
}
