package edgecmd

import (
	"fmt"
	"strings"
)

// WebConfig is what the edge serves to browsers besides RTM: the client
// files (/sluice.js, /sluice.d.ts, /sluice.wasm, /wasm_exec.js), always,
// and the demo pages.
type WebConfig struct {
	// Demo serves the demo pages at / (a chat room and a dashboard of the
	// edge; they connect with the page's ?appkey=, default "demo").
	// Default true; false answers 404 for them, as an edge in production
	// should (deploy/edge.yaml).
	Demo *bool `yaml:"demo,omitempty"`
}

// demo reports whether the demo pages are served.
func (w WebConfig) demo() bool { return w.Demo == nil || *w.Demo }

// minKeyChars is the number of distinct characters under which a jwt_key
// is called weak: 32 random bytes in base64 have some 28, in hex 16; a
// key typed by hand ("aaaa...", "1234...") far fewer.
const minKeyChars = 10

// placeholders are words of example keys that were never replaced.
var placeholders = []string{"replace", "change", "example", "placeholder", "secret", "password", "todo", "xxx"}

// Warnings are what is valid but likely a mistake in the configuration,
// for the edge to log at startup and --check-config to print.
func (c *Config) Warnings() []string {
	var ws []string
	for i, a := range c.Apps {
		if why := weakKey(a.JWTKey); why != "" {
			ws = append(ws, fmt.Sprintf("apps[%d].jwt_key: %s: anyone who guesses it can mint tokens for app %q; use 32 random bytes, as from `openssl rand -base64 32`", i, why, a.Appkey))
		}
	}
	for _, w := range []string{c.Cluster.mixedRoutesWarning(), c.externalSyncWarning()} {
		if w != "" {
			ws = append(ws, w)
		}
	}
	ws = append(ws, c.demoKeyWarnings()...)
	return append(ws, c.exposureWarnings()...)
}

// weakKey says why an HMAC secret looks weak, or "" when it does not (or
// is not set): a placeholder word, few distinct characters, or a short
// pattern repeated. It cannot prove a key strong; it catches the keys
// copied from examples or typed by hand.
func weakKey(key string) string {
	if key == "" {
		return ""
	}
	lower := strings.ToLower(key)
	for _, w := range placeholders {
		if strings.Contains(lower, w) {
			return fmt.Sprintf("it looks like a placeholder (it contains %q)", w)
		}
	}
	distinct := map[rune]bool{}
	for _, r := range key {
		distinct[r] = true
	}
	if len(distinct) < minKeyChars {
		return fmt.Sprintf("it has only %d distinct characters", len(distinct))
	}
	for p := 1; p <= len(key)/2; p++ {
		if strings.Repeat(key[:p], len(key)/p+1)[:len(key)] == key {
			return fmt.Sprintf("it repeats %q", key[:p])
		}
	}
	return ""
}
