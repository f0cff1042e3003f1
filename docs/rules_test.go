package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// ruleRef is an R-number as code, errors, the spec and the README cite it:
// a section (R3) or a rule (R6.4), not part of a name (unicode.Nd.R16,
// TestR2_9).
var ruleRef = regexp.MustCompile(`(?:^|[^\w.])(R[1-9](?:\.[0-9]+)?)\b`)

// ruleDef is where docs/rules.md defines a number: a section heading
// ("## R2 Moves") or a rule's bold lead ("- **R2.9** ...").
var ruleDef = regexp.MustCompile(`(?m)^(?:#+ |- \*\*)(R[1-9][0-9]*(?:\.[0-9]+)?)\b`)

// TestRulesDocumentDefinesEveryCitedRule reads every Go file, the spec
// (openapi.yaml, docs/swagger.json), the SQL migrations and the Markdown
// documents of the repository and fails for an R-number that
// docs/rules.md does not define, or that it defines twice; and unless the
// README links the document.
func TestRulesDocumentDefinesEveryCitedRule(t *testing.T) {
	doc, err := os.ReadFile("rules.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range ruleDef.FindAllStringSubmatch(string(doc), -1) {
		if defined[m[1]] {
			t.Errorf("docs/rules.md defines %s twice", m[1])
		}
		defined[m[1]] = true
	}
	for _, must := range []string{"R2.9", "R6.6", "R6.7", "R7.1", "R7.5", "R3"} {
		if !defined[must] {
			t.Errorf("docs/rules.md does not define %s", must)
		}
	}
	cited := map[string][]string{} // number -> files citing it
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".yaml", ".json", ".sql", ".md", ".ts":
		default:
			return nil
		}
		rel, _ := filepath.Rel("..", path)
		if rel == filepath.Join("docs", "rules.md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ruleRef.FindAllStringSubmatch(string(b), -1) {
			ref := m[1]
			if fs := cited[ref]; len(fs) == 0 || fs[len(fs)-1] != rel {
				cited[ref] = append(cited[ref], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cited) < 30 {
		t.Fatalf("found only %d R-numbers in the repository: the walk is broken", len(cited))
	}
	var missing []string
	for ref, files := range cited {
		if !defined[ref] {
			missing = append(missing, ref+" (cited in "+strings.Join(files, ", ")+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/rules.md does not define %s", m)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/rules.md)") {
		t.Error("README.md does not link docs/rules.md")
	}
}
