package docs

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// generated are the files `go generate ./docs` writes, relative to the
// repository root.
var generated = []string{"docs/swagger.json", "openapi.yaml", "clients/go/client.gen.go"}

// TestGeneratedFilesAreCurrent copies the repository to a temporary
// directory, runs `go generate ./docs` there (the pinned tools of go.mod)
// and fails if the committed docs/swagger.json, openapi.yaml or
// clients/go/client.gen.go differ from what it produces: the committed
// spec and client must be exactly what the annotations say.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	tmp := t.TempDir()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(tmp, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(tmp, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range generated {
		if err := os.Remove(filepath.Join(tmp, f)); err != nil {
			t.Fatal(err)
		}
	}
	// openapi.go embeds openapi.yaml; an empty one lets the tree build.
	if err := os.WriteFile(filepath.Join(tmp, "openapi.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "generate", "./docs")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go generate ./docs: %v\n%s", err, out)
	}
	for _, f := range generated {
		want, err := os.ReadFile(filepath.Join(tmp, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./docs` and commit the result", f)
		}
	}
}
