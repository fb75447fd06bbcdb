// npm runs this when it installs client-js from a folder or a file:
// dependency, that is from a checkout of Sluice, which holds sluice.wasm
// only brotli-compressed (dist/sluice.wasm.br: 0.8 MB in git instead of
// 3.7). It writes dist/sluice.wasm, which sluice.js and bundlers load, and
// dist/sluice.wasm.gz, for hosts that serve precompressed files, both
// decoded from dist/sluice.wasm.br, which is what `make wasm` builds from
// the tree (`make test` checks it). Files that are already right are left
// as they are. The packages of releases and edges hold all three files and
// run no script.
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { brotliDecompressSync, constants, gunzipSync, gzipSync } from "node:zlib";

const dist = new URL("./dist/", import.meta.url);
const file = (name) => new URL(name, dist);

// read returns a file's bytes, or null if it is not there.
function read(name) {
  return existsSync(file(name)) ? readFileSync(file(name)) : null;
}

// put writes data to a file, encoded, unless the file holds it already
// (once decoded), through a temporary file so that a reader never sees
// half of it.
function put(name, data, encode = (b) => b, decode = (b) => b) {
  const old = read(name);
  if (old && decode(old).equals(data)) return;
  writeFileSync(file(name + ".tmp"), encode(data));
  renameSync(file(name + ".tmp"), file(name));
  console.log(`@sluicehq/sluice: wrote dist/${name}`);
}

const br = read("sluice.wasm.br");
if (!br) {
  if (!read("sluice.wasm")) {
    console.error(
      "@sluicehq/sluice: dist/sluice.wasm is missing, and so is dist/sluice.wasm.br it is decoded from:\n" +
        "  run `make wasm` in the Sluice checkout (it needs Go), then install again",
    );
    process.exit(1);
  }
  process.exit(0); // a package that holds sluice.wasm itself
}
const wasm = brotliDecompressSync(br);
put("sluice.wasm", wasm);
put("sluice.wasm.gz", wasm, (b) => gzipSync(b, { level: constants.Z_BEST_COMPRESSION }), gunzipSync);
