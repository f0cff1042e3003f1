package api_test

import (
	"context"
	"net/url"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
)

// chromiumFlags are the flags of the headless Chromium the page test runs:
// no sandbox (tests run as root), and nothing that would make the browser
// itself reach a network (updates, sync, QUIC, first-run pages), so every
// request it makes is one the page asked for.
var chromiumFlags = []string{"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync"}

// newChromium starts a headless Chromium (Debian's chromium package) with
// a fresh profile, for the test's lifetime. It fails the test, saying what
// to install, if there is none.
func newChromium(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not on PATH: install Debian's chromium package (apt-get install -y chromium); .ci/run does")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir())}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(cancelBrowser)
	return ctx
}

// TestDocsPageInChromium loads /docs in a real headless Chromium: Swagger
// UI renders one block per operation of openapi.yaml, every request the
// page makes goes to the test server on loopback (its assets are the
// server's, nothing comes from a CDN), and "Try it out" then "Execute" on
// GET /v1/variants shows the server's 200.
func TestDocsPageInChromium(t *testing.T) {
	t.Parallel()
	ctx := newChromium(t)
	e := newEnv(t, "sqlite")
	server, err := url.Parse(e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	operations := 0
	for _, item := range doc.Paths.Map() {
		operations += len(item.Operations())
	}

	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, r.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium: network events: %v", err)
	}

	const op = "#operations-variants-listVariants"
	css := func(sel string) chromedp.CSS { return chromedp.CSS(op + " " + sel) }
	err = chromedp.Do(ctx,
		chromedp.Navigate(e.srv.URL+"/docs"),
		chromedp.WaitVisible(chromedp.CSS(op)),
	)
	if err != nil {
		t.Fatalf("/docs in Chromium: %v", err)
	}
	// Swagger UI draws the operations from scripts after the page has
	// loaded: wait until every one is drawn (or a minute has passed), not
	// for the load alone.
	var blocks int
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		blocks, err = chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".opblock").length`))
		if err != nil {
			t.Fatalf("counting the operations: %v", err)
		}
		if blocks >= operations || time.Now().After(deadline) {
			break
		}
	}
	err = chromedp.Do(ctx,
		chromedp.Click(css(".opblock-summary")),
		chromedp.WaitVisible(css(".try-out__btn")),
		chromedp.Click(css(".try-out__btn")),
		chromedp.WaitVisible(css(".execute")),
		chromedp.Click(css(".execute")),
		chromedp.WaitVisible(css(".live-responses-table tr.response .response-col_status")),
	)
	if err != nil {
		t.Fatalf(`"Try it out" on GET /v1/variants: %v`, err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(css(".live-responses-table tr.response .response-col_status")))
	if err != nil {
		t.Fatalf("reading the response's status: %v", err)
	}
	if blocks != operations {
		t.Errorf("the page shows %d operations, openapi.yaml has %d", blocks, operations)
	}
	if !strings.HasPrefix(strings.TrimSpace(status), "200") {
		t.Errorf(`"Try it out" on GET /v1/variants shows %q, want 200`, status)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d operations shown, %d requests, Try it out: %s", blocks, len(requested), status)
	if len(requested) < 3 {
		t.Errorf("the page made %d requests: %v", len(requested), requested)
	}
	sawVariants := false
	for _, raw := range requested {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "data" {
			continue // an inline image is no request to a host
		}
		if u.Scheme != "http" || u.Host != server.Host {
			t.Errorf("the page asked %s, not the test server %s", raw, server.Host)
		}
		sawVariants = sawVariants || u.Path == "/v1/variants"
	}
	if !sawVariants {
		t.Errorf("Execute sent no request to /v1/variants: %v", requested)
	}
}
