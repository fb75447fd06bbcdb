package client

import "strings"

// hasVersionSuffix reports whether a path already names a protocol
// version, like the RTM SDKs' check for /v[0-9]+$: "/v2", "/v3". Written
// by hand because regexp would add a quarter megabyte to the browser
// build.
func hasVersionSuffix(path string) bool {
	i := strings.LastIndex(path, "/v")
	if i < 0 || i+2 == len(path) {
		return false
	}
	for _, c := range path[i+2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
