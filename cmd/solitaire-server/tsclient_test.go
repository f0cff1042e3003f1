package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/docs/npmtest"
)

// tsClientDir is the TypeScript client, from this package's directory.
var tsClientDir = filepath.Join("..", "..", "clients", "ts")

// TestTypeScriptClient generates a TypeScript client from openapi.yaml
// (openapi-typescript and openapi-fetch, pinned by clients/ts's lockfile),
// type-checks and compiles it and the script that uses it with tsc
// --strict, and runs the
// script with node against this server, started as a process on SQLite:
// it must win the README's nearly-won layout over HTTP. The script
// narrows events on their type and sends a seed above 2^53 as a string,
// so a spec that lost either would not compile.
func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	npmtest.Install(t, tsClientDir)
	npmtest.Run(t, tsClientDir, "node_modules/.bin/openapi-typescript", "../../openapi.yaml", "-o", "src/schema.gen.ts")
	// One pass type-checks (strict, as tsconfig.json also says) and emits
	// dist/: a type error fails it.
	npmtest.Run(t, tsClientDir, "node_modules/.bin/tsc", "-p", "tsconfig.json", "--strict")

	srv := startServerProcess(t, buildBinary(t), "SOLITAIRE_ADDR=127.0.0.1:0",
		"SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "solitaire.db"), "SOLITAIRE_WINNABLE_WORKERS=1")
	out := string(npmtest.Run(t, tsClientDir, "node", "dist/win.js", srv.base))
	if !strings.Contains(out, "\nwon ") {
		t.Fatalf("the TypeScript client did not win:\n%s", out)
	}
	for _, want := range []string{"drew AS", "moved AS waste -> foundation/0", "moved KD tableau/3 -> foundation/"} {
		if !strings.Contains(out, want) {
			t.Errorf("the script's log lacks %q:\n%s", want, out)
		}
	}
}
