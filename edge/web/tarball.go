package web

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"time"
)

// tarballPath is where the edge serves its npm package: `npm install
// https://edge.example.com/sluice.tgz` installs the client this very edge
// serves, versioned as the edge.
const tarballPath = "/sluice.tgz"

// tarballFiles are the package's files, by their path in the package and
// in the embedded tree, but for the modules under lib/, which are all
// taken (tarballModules). package.json is rewritten (tarball); the files
// the tree does not embed (sluice.wasm and its gzip) are given.
var tarballFiles = []struct{ pkg, embedded string }{
	{"package.json", "package.json"},
	{"README.md", "README.md"},
	{"LICENSE", "LICENSE"},
	{"install.mjs", "install.mjs"},
	{"sluice.js", "sluice.js"},
	{"stream.js", "stream.js"},
	{"sluice.d.ts", "sluice.d.ts"},
	{"dist/wasm_exec.js", "dist/wasm_exec.js"},
	{"dist/sluice.wasm", ""},
	{"dist/sluice.wasm.br", "dist/sluice.wasm.br"},
	{"dist/sluice.wasm.gz", ""},
	{"dist/sluice.wasm.d.ts", "dist/sluice.wasm.d.ts"},
}

// tarballModules matches the modules sluice.js imports, as package.json's
// "files" names them.
const tarballModules = "lib/*.js"

// npmEpoch is the date npm gives every file of the packages it packs; a
// fixed date also makes the tarball, and so its ETag, the same on every
// edge of one version.
var npmEpoch = time.Date(1985, time.October, 26, 8, 15, 0, 0, time.UTC)

// tarball builds the npm package of the embedded files and the generated
// ones (by their path in the package): what `npm pack` makes of client-js
// after `make wasm`, with version as its version and without the scripts
// (prepack builds dist/ and install decodes it, which is done).
func tarball(fsys fs.FS, version string, generated map[string][]byte) ([]byte, error) {
	files := tarballFiles
	modules, _ := fs.Glob(fsys, tarballModules) // the pattern is valid
	for _, m := range modules {
		files = append(files, struct{ pkg, embedded string }{m, m})
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.DefaultCompression) // a valid level cannot fail; see asset.compress
	tw := tar.NewWriter(zw)
	for _, f := range files {
		var data []byte
		var err error
		if f.embedded == "" {
			if data = generated[f.pkg]; data == nil {
				err = fmt.Errorf("%s: %w", f.pkg, fs.ErrNotExist)
			}
		} else {
			data, err = fs.ReadFile(fsys, f.embedded)
		}
		switch {
		case err != nil:
			return nil, err
		case f.pkg == "package.json":
			if data, err = packageJSON(data, version); err != nil {
				return nil, err
			}
		}
		hdr := &tar.Header{Name: "package/" + f.pkg, Mode: 0o644, Size: int64(len(data)), ModTime: npmEpoch, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("%s: %w", f.pkg, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("%s: %w", f.pkg, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// packageJSON sets the version of package.json and drops its scripts.
// The keys come out sorted, which npm does not mind.
func packageJSON(data []byte, version string) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("package.json: %w", err)
	}
	v, _ := json.Marshal(version)
	p["version"] = v
	delete(p, "scripts")
	out, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("package.json: %w", err)
	}
	return append(out, '\n'), nil
}

// semverTail matches what may follow MAJOR.MINOR.PATCH in a version npm
// accepts: a pre-release and build metadata.
var semverTail = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// npmVersion turns the edge's version into one npm accepts: v1.2.3 and
// Go's pseudo-versions (v0.0.0-20261201113523-7c490e839c4e+dirty) lose
// their v; anything else ("dev", "dev-7c490e839c4e") becomes a
// pre-release of 0.0.0.
func npmVersion(v string) string {
	if s := strings.TrimPrefix(v, "v"); semverTail.MatchString(s) {
		return s
	}
	tail := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, v)
	if tail == "" {
		tail = "dev"
	}
	return "0.0.0-" + tail
}

// tarballAsset makes the package an asset, sent as it is (it is gzip).
func tarballAsset(fsys fs.FS, version string, generated map[string][]byte) (*asset, error) {
	data, err := tarball(fsys, npmVersion(version), generated)
	if err != nil {
		return nil, fmt.Errorf("web: the npm package: %w", err)
	}
	sum := sha256.Sum256(data)
	return &asset{name: "sluice.tgz", ctype: "application/gzip", data: data, etag: hex.EncodeToString(sum[:8]), packed: true}, nil
}
