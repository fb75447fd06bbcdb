package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

const healthUsage = `health [--url URL] [--ready]

Asks an edge's /healthz (serving) or, with --ready, /readyz (taking
traffic), and exits 0 only when it answers 200. It is the container image's
health check, which has no curl.`

// runHealth asks an edge whether it is alive (or ready), printing the
// answer: one line, "URL: 200 ok".
func runHealth(ctx context.Context, args []string, s stdio) error {
	fs := newFlagSet("health", healthUsage, s)
	rawURL := fs.String("url", "", "edge address: http(s)://, ws(s):// (the same host over http(s)) or host:port (env SLUICE_URL; default "+defaultURL+")")
	ready := fs.Bool("ready", false, "ask /readyz instead of /healthz")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	base, err := apiBase(firstOf(*rawURL, os.Getenv("SLUICE_URL"), defaultURL))
	if err != nil {
		return fmt.Errorf("%w: --url: %v", errUsage, err)
	}
	target := base + "/healthz"
	if *ready {
		target = base + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	status, body, err := httpGet(ctx, target)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%s: %d %s", target, status, body)
	}
	_, err = fmt.Fprintf(s.out, "%s: %d %s\n", target, status, body)
	return err
}

// httpGet returns the status and the first line of the body (at most
// 256 bytes) of a GET.
func httpGet(ctx context.Context, target string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", target, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		return 0, "", fmt.Errorf("GET %s: %w", target, err)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return resp.StatusCode, line, nil
}
