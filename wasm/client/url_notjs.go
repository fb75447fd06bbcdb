//go:build !js

package client

import (
	"fmt"
	"net/url"
	"strings"
)

// endpointURL builds the WebSocket URL for an edge endpoint: ws:// or
// wss:// (http:// and https:// are accepted and converted, as browsers
// only open ws URLs), "/v2" appended unless the path already ends in "/vN",
// and the appkey query parameter set. Other query parameters are kept.
func endpointURL(endpoint, appkey string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrURL, endpoint, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "ws", "http":
		u.Scheme = "ws"
	case "wss", "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("%w: %q must start with ws://, wss://, http:// or https://", ErrURL, endpoint)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: %q has no host", ErrURL, endpoint)
	}
	if appkey == "" {
		return "", fmt.Errorf("%w: no appkey", ErrOptions)
	}
	path := strings.TrimSuffix(u.Path, "/")
	if !hasVersionSuffix(path) {
		path += "/v2"
	}
	u.Path, u.RawPath = path, ""
	q := u.Query()
	q.Set("appkey", appkey)
	u.RawQuery = q.Encode()
	u.Fragment = ""
	return u.String(), nil
}
