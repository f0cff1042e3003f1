// Package npmtest lets Go tests run the project's npm tools (the OpenAPI
// linter in docs/lint, the validating proxy in docs/prism, the TypeScript
// client in clients/ts): each lives in a directory with a package.json and
// a package-lock.json that pins every package, installed with `npm ci`.
package npmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Install makes sure the packages of dir's package-lock.json are installed
// in dir/node_modules, running `npm ci` (exactly the lockfile) unless
// node_modules is at least as new as the lockfile. The test fails, saying
// what to install, if node or npm is not on PATH.
func Install(t testing.TB, dir string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: install Node.js and npm (Debian: apt-get install -y nodejs npm); .ci/run does", tool)
		}
	}
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	// npm writes node_modules/.package-lock.json at every install.
	if inst, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !inst.ModTime().Before(lock.ModTime()) {
		return
	}
	Run(t, dir, "npm", "ci", "--no-audit", "--no-fund")
}

// Run runs a command in dir and returns its standard output; the test
// fails with the command's whole output if it does not exit 0.
func Run(t testing.TB, dir string, name string, args ...string) []byte {
	t.Helper()
	out, err := run(t, dir, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// RunAny is Run for a command whose exit status is part of its answer (a
// linter's): only a command that does not start fails the test.
func RunAny(t testing.TB, dir string, name string, args ...string) []byte {
	t.Helper()
	out, err := run(t, dir, name, args...)
	if _, exited := errors.AsType[*exec.ExitError](err); err != nil && !exited {
		t.Fatal(err)
	}
	return out
}

func run(t testing.TB, dir string, name string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = ee.Stderr
		}
		return out, &cmdError{fmt.Errorf("%s %v in %s: %w\nstdout:\n%s\nstderr:\n%s", name, args, dir, err, out, stderr), err}
	}
	return out, nil
}

// cmdError is a failed command, described whole, that still unwraps to
// exec's error.
type cmdError struct {
	described error
	cause     error
}

func (e *cmdError) Error() string { return e.described.Error() }
func (e *cmdError) Unwrap() error { return e.cause }
