//go:build js && wasm

package client

import (
	"strconv"
	"strings"
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// endpointURL builds the WebSocket URL for an edge endpoint, like the
// native version (url_notjs.go), with the browser's own URL parser in
// place of net/url (which would add about 65 KB gzipped to sluice.wasm):
// ws:// or wss:// (http:// and https:// are converted), "/v2" appended
// unless the path already ends in "/vN", the appkey query parameter set.
func endpointURL(endpoint, appkey string) (href string, err error) {
	defer func() {
		if r := recover(); r != nil { // new URL throws a TypeError
			href, err = "", errtext.Kind(ErrURL, strconv.Quote(endpoint)+": "+errtext.Text(r))
		}
	}()
	u := js.Global().Get("URL").New(endpoint)
	// URL.protocol is already lower case: the URL standard folds schemes.
	switch strings.TrimSuffix(u.Get("protocol").String(), ":") {
	case "ws", "http":
		u.Set("protocol", "ws:")
	case "wss", "https":
		u.Set("protocol", "wss:")
	default:
		return "", errtext.Kind(ErrURL, strconv.Quote(endpoint)+" must start with ws://, wss://, http:// or https://")
	}
	if u.Get("host").String() == "" {
		return "", errtext.Kind(ErrURL, strconv.Quote(endpoint)+" has no host")
	}
	if appkey == "" {
		return "", errtext.Kind(ErrOptions, "no appkey")
	}
	path := strings.TrimSuffix(u.Get("pathname").String(), "/")
	if !hasVersionSuffix(path) {
		path += "/v2"
	}
	u.Set("pathname", path)
	u.Get("searchParams").Call("set", "appkey", appkey)
	u.Set("hash", "")
	return u.Get("href").String(), nil
}
