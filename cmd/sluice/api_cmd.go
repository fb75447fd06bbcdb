package main

// sluice api: calls the server HTTP API (edge/api) as an app's backend.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// apiTimeout bounds one API call.
const apiTimeout = 30 * time.Second

// maxAPIAnswer bounds the answer read back, and a body read from stdin.
const maxAPIAnswer = 64 << 20

func runAPI(ctx context.Context, args []string, s stdio) error {
	fs := newFlagSet("api", "api [flags] METHOD [JSON|-]\n\n"+
		"Calls POST /api/METHOD on the edge with JSON as the body ({} when left\n"+
		"out, standard input for -) and prints the answer. Exits 1 when the\n"+
		"edge refuses (the answer, {\"error\",\"reason\"}, is still printed).\n"+
		"Methods: publish, broadcast, read, history, channels, info, disconnect, unsubscribe (see docs/server-api.md).", s)
	var rawURL, key string
	fs.StringVar(&rawURL, "url", "", "edge address: http(s)://, ws(s):// (the same host over http(s)) or host:port (env SLUICE_URL; default "+defaultURL+")")
	fs.StringVar(&key, "api-key", "", "one of the app's api_keys (env SLUICE_API_KEY)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return fmt.Errorf("%w: want METHOD [JSON|-]", errUsage)
	}
	key = firstOf(key, os.Getenv("SLUICE_API_KEY"))
	if key == "" {
		return fmt.Errorf("%w: no API key: set --api-key or SLUICE_API_KEY", errUsage)
	}
	base, err := apiBase(firstOf(rawURL, os.Getenv("SLUICE_URL"), defaultURL))
	if err != nil {
		return fmt.Errorf("%w: --url: %v", errUsage, err)
	}
	body := []byte("{}")
	if len(pos) == 2 {
		body = []byte(pos[1])
		if pos[1] == "-" {
			if body, err = io.ReadAll(io.LimitReader(s.in, maxAPIAnswer)); err != nil {
				return fmt.Errorf("read the body from standard input: %w", err)
			}
		}
	}
	return callAPI(ctx, base+"/api/"+url.PathEscape(pos[0]), key, body, s.out)
}

// callAPI posts body and prints the answer; an answer other than 200 is
// an error naming its code and reason.
func callAPI(ctx context.Context, endpoint, key string, body []byte, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("api request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("api call: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIAnswer))
	if err != nil {
		return fmt.Errorf("api call: reading the answer: %w", err)
	}
	answer = append(bytes.TrimRight(answer, "\n"), '\n')
	if _, err := out.Write(answer); err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var e struct{ Error, Reason string }
	if json.Unmarshal(answer, &e) != nil || e.Error == "" {
		return fmt.Errorf("the edge answered %s", resp.Status)
	}
	return fmt.Errorf("%s (HTTP %d): %s", e.Error, resp.StatusCode, e.Reason)
}

// apiBase turns the address a user gives into the API's base URL: ws://
// and wss:// become http:// and https:// (the same listener serves RTM and
// the API), a bare host:port is http://, and a trailing /v2 (the RTM path,
// as copied from the banner) is dropped.
func apiBase(s string) (string, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	case "http", "https":
	default:
		return "", errors.New("scheme " + u.Scheme + " is not http, https, ws or wss")
	}
	if u.Host == "" {
		return "", errors.New("no host in " + s)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v2")
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimSuffix(u.String(), "/"), nil
}
