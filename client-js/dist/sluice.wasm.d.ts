// The WebAssembly client as a bundler's asset import gives it: its URL.
// For the recipe of the package README (esbuild's file loader; webpack's
// asset/resource gives the same):
//
//   import wasmURL from "@sluicehq/sluice/dist/sluice.wasm";
//   const client = await Sluice.connect(url, { appkey, wasmURL });
declare const wasmURL: string;
export default wasmURL;
