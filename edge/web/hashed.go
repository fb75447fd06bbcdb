package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"path"
	"strings"
)

// Content-hashed URLs. The client files are also served under names that
// carry their content's hash (/sluice.<hash>.wasm, /wasm_exec.<hash>.js,
// /lib/base.<hash>.js, /sluice.<hash>.js) with a Cache-Control that lets
// a browser keep them a year without asking again; their bytes never
// change under a name, and a new build has new names. /sluice.js, which
// pages import by its plain name and browsers revalidate (304 until the
// binary changes), loads the hashed files: a second visit asks the edge
// about sluice.js only and reads the rest from its HTTP cache (Chromium
// compiles sluice.wasm again: docs/browser.md). The plain names stay, with "no-cache", for pages and
// bundles that name them.

// immutableCache is the Cache-Control of a content-hashed URL.
const immutableCache = "public, max-age=31536000, immutable"

// hashedFiles are the embedded files served under hashed names too, by
// their embedded name and their plain URL path, in an order where a file
// comes after every file it names: each is rewritten to name the hashed
// URLs of the files before it (by the literal relative path that
// new URL and import take in the client's modules), then hashed itself.
// A file that names one after it keeps its plain name: lib/worker.js's
// "../sluice.js", which would make a cycle (sluice.js names the worker);
// the worker needs only sluice.js's public API, which a newer build keeps.
var hashedFiles = []struct{ name, plain string }{
	{"dist/sluice.wasm", "/sluice.wasm"},
	{"dist/wasm_exec.js", "/wasm_exec.js"},
	{"lib/base.js", "/lib/base.js"},
	{"lib/resume.js", "/lib/resume.js"},
	{"lib/subscription.js", "/lib/subscription.js"},
	{"lib/worker.js", "/lib/worker.js"},
	{"lib/shared.js", "/lib/shared.js"},
	{"stream.js", "/stream.js"},
	{"sluice.js", "/sluice.js"},
}

// hashedPath is a plain URL path with the hash before its extension.
func hashedPath(plain, etag string) string {
	ext := path.Ext(plain)
	return strings.TrimSuffix(plain, ext) + "." + etag + ext
}

// relative is how a module in directory from names the file at to, both
// slash-separated and rooted alike: "./x.js", "./lib/x.js", "../x.js".
func relative(from, to string) string {
	from = strings.Trim(from, "/.")
	to = strings.TrimPrefix(to, "/")
	up := ""
	for from != "" && !strings.HasPrefix(to, from+"/") {
		up += "../"
		from = strings.Trim(path.Dir(from), ".")
	}
	if from != "" {
		to = strings.TrimPrefix(to, from+"/")
	}
	if up == "" {
		return "./" + to
	}
	return up + to
}

// addHashed routes the hashed names of the files present, in hashedFiles'
// order, replacing each JavaScript asset by one that names the hashed
// files before it; the plain name serves the rewritten file too. A file
// keeps the plain literal of a file whose literal it no longer has;
// TestHashedEmbedded fails then.
func (h *Handler) addHashed() {
	h.hashed = make(map[string]string)
	type done struct{ name, hashed string }
	var before []done
	for _, f := range hashedFiles {
		a := h.assets[f.name]
		if a == nil {
			continue
		}
		if path.Ext(f.name) == ".js" && len(before) > 0 {
			data := a.data
			for _, d := range before {
				literal := `"` + relative(path.Dir(f.name), d.name) + `"`
				data = bytes.ReplaceAll(data, []byte(literal), []byte(`"`+relative(path.Dir(f.plain), d.hashed)+`"`))
			}
			if !bytes.Equal(data, a.data) {
				sum := sha256.Sum256(data)
				a = &asset{name: a.name, ctype: a.ctype, etag: hex.EncodeToString(sum[:8]), data: data}
				h.assets[f.name] = a
			}
		}
		p := hashedPath(f.plain, a.etag)
		h.hashed[p] = f.name
		before = append(before, done{name: f.name, hashed: p})
	}
}
