package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// Content-hashed URLs. The client files are also served under names that
// carry their content's hash (/sluice.<hash>.wasm, /wasm_exec.<hash>.js,
// /sluice.<hash>.js) with a Cache-Control that lets a browser keep them
// a year without asking again; their bytes never change under a name, and
// a new build has new names. /sluice.js, which pages import by its plain
// name and browsers revalidate (304 until the binary changes), loads the
// hashed sluice.wasm and wasm_exec.js: a second visit asks the edge about
// sluice.js only, and Chromium reuses the code it compiled for
// sluice.wasm. The plain names stay, with "no-cache", for pages and
// bundles that name them.

// immutableCache is the Cache-Control of a content-hashed URL.
const immutableCache = "public, max-age=31536000, immutable"

// hashedFiles are the embedded files served under hashed names too, and
// how sluice.js names them (the literals that sluice.js passes to new URL
// and import, relative to itself).
var hashedFiles = []struct {
	name    string // embedded name
	prefix  string // URL path before the hash
	ext     string // after it
	literal string // in sluice.js
}{
	{name: "dist/sluice.wasm", prefix: "/sluice.", ext: ".wasm", literal: `"./dist/sluice.wasm"`},
	{name: "dist/wasm_exec.js", prefix: "/wasm_exec.", ext: ".js", literal: `"./dist/wasm_exec.js"`},
}

// addHashed routes the hashed names of the files present, and replaces
// the sluice.js asset by one that loads the hashed files, itself routed
// under its hash. sluice.js keeps its plain literal for a file whose
// literal it no longer has; TestHashedEmbedded fails then.
func (h *Handler) addHashed() {
	h.hashed = make(map[string]string)
	js := h.assets["sluice.js"]
	var rewritten []byte
	if js != nil {
		rewritten = js.data
	}
	for _, f := range hashedFiles {
		a := h.assets[f.name]
		if a == nil {
			continue
		}
		path := f.prefix + a.etag + f.ext
		h.hashed[path] = f.name
		if rewritten != nil {
			rel := `"./` + path[1:] + `"`
			rewritten = bytes.ReplaceAll(rewritten, []byte(f.literal), []byte(rel))
		}
	}
	if js == nil {
		return
	}
	sum := sha256.Sum256(rewritten)
	etag := hex.EncodeToString(sum[:8])
	h.assets["sluice.js"] = &asset{name: js.name, ctype: js.ctype, etag: etag, data: rewritten}
	h.hashed["/sluice."+etag+".js"] = "sluice.js"
}
