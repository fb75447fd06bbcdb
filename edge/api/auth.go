package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/edge/app"
)

// keyring finds the app an API key names without telling, by timing or
// by error text, which app or how long a key is: keys are compared as
// SHA-256 digests (all 32 bytes, whatever the key's length), in constant
// time, against every key of every app, without stopping at a match.
type keyring struct {
	digests [][sha256.Size]byte
	apps    []string // parallel to digests: the appkey each key names
}

func newKeyring(apps []*app.App) *keyring {
	k := &keyring{}
	for _, a := range apps {
		for _, key := range a.APIKeys {
			k.digests = append(k.digests, sha256.Sum256([]byte(key)))
			k.apps = append(k.apps, a.Key)
		}
	}
	return k
}

// authenticate returns the appkey the request's API key names, or a 401
// Error.
func (k *keyring) authenticate(hd http.Header) (string, error) {
	key, ok := presented(hd)
	if !ok {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeAuthenticationFailed,
			Reason: "missing API key: send X-API-Key: KEY or Authorization: apikey KEY"}
	}
	d := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.digests {
		eq := subtle.ConstantTimeCompare(d[:], k.digests[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeAuthenticationFailed, Reason: "invalid API key"}
	}
	return k.apps[found], nil
}

// presented returns the key of X-API-Key, or else of Authorization with
// the scheme "apikey" (case-insensitive, as HTTP schemes are).
func presented(hd http.Header) (string, bool) {
	if v := hd.Get("X-API-Key"); v != "" {
		return v, true
	}
	scheme, key, ok := strings.Cut(strings.TrimSpace(hd.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "apikey") {
		return "", false
	}
	key = strings.TrimSpace(key)
	return key, key != ""
}
