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
	key, err := presented(hd)
	if err != nil {
		return "", err
	}
	appKey, ok := k.lookup(key)
	if !ok {
		return "", &Error{Status: http.StatusUnauthorized, Code: CodeAuthenticationFailed, Reason: "invalid API key"}
	}
	return appKey, nil
}

// lookup returns the appkey key names, comparing its digest with every
// key's.
func (k *keyring) lookup(key string) (string, bool) {
	d := sha256.Sum256([]byte(key))
	found := -1
	for i := range k.digests {
		eq := subtle.ConstantTimeCompare(d[:], k.digests[i][:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return "", false
	}
	return k.apps[found], true
}

// Authenticate returns the appkey an API key names, compared as a
// request's key is (in constant time, against every key of every app), or
// false when it names none: for a login that takes an API key (the admin
// page) without telling more about the keys than the API does.
func (h *Handler) Authenticate(key string) (appKey string, ok bool) {
	if key == "" {
		return "", false
	}
	return h.keys.lookup(key)
}

// presented returns the key of X-API-Key, or of Authorization with the
// scheme "apikey" (case-insensitive, as HTTP schemes are), or a 401 Error.
// Credentials that could name two keys are refused rather than one picked:
// two X-API-Key headers, two Authorization headers, or both forms with
// different keys. Whichever header a proxy or a library adds or merges,
// the edge must not decide which app a request speaks for by the order
// of its headers. Authorization with another scheme (Bearer, Basic) is no
// API key, and is ignored.
func presented(hd http.Header) (string, error) {
	keys := hd.Values("X-API-Key")
	auths := hd.Values("Authorization")
	if len(keys) > 1 || len(auths) > 1 {
		return "", ambiguous("send one X-API-Key header or one Authorization: apikey header, not several")
	}
	var fromAuth string
	if len(auths) == 1 {
		scheme, key, ok := strings.Cut(strings.TrimSpace(auths[0]), " ")
		if ok && strings.EqualFold(scheme, "apikey") {
			fromAuth = strings.TrimSpace(key)
		}
	}
	switch {
	case len(keys) == 1 && keys[0] != "" && fromAuth != "" && fromAuth != keys[0]:
		return "", ambiguous("X-API-Key and Authorization: apikey name different keys; send one")
	case len(keys) == 1 && keys[0] != "":
		return keys[0], nil
	case fromAuth != "":
		return fromAuth, nil
	}
	return "", &Error{Status: http.StatusUnauthorized, Code: CodeAuthenticationFailed,
		Reason: "missing API key: send X-API-Key: KEY or Authorization: apikey KEY"}
}

// ambiguous is the 401 of credentials that name more than one key.
func ambiguous(reason string) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeAuthenticationFailed, Reason: "ambiguous API key: " + reason}
}
