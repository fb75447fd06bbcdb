package deploy

// The demo chat page, as a visitor opens it, in a headless Chromium.

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where `make chromium` installs it.
const chromiumPath = "/usr/bin/chromium"

// chatInBrowser opens base's chat page in Chromium, waits until it has
// joined its room (its Send button is enabled: the page's client is
// connected and subscribed), says something and waits for it to come
// back through the edges.
func chatInBrowser(t *testing.T, base string) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the compose test opens the demo in Chromium at %s (`make chromium` installs it, as root): %v", chromiumPath, err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-background-networking", true))
	defer cancelAlloc() // waits for the browser to exit
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()
	text := fmt.Sprintf("hello through Caddy, %d", time.Now().UnixNano())
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/chat.html#compose"),
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#name"), "ops"),
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.Click(chromedp.CSS("#send")),
	)
	if err != nil {
		t.Fatalf("the chat page through %s: %v", base, err)
	}
	shown := fmt.Sprintf(`[...document.querySelectorAll("#messages li .text")].some((e) => e.textContent === %q)`, text)
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](shown, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("the chat page through %s never showed what it said: %v", base, err)
	}
}
