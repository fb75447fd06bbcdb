package msgpack

// typeName stands in for %T in the browser build, where naming a type
// would take fmt and reflect (some 100 KB gzipped of sluice.wasm); it
// appears only in the errors of a caller's bug, which the browser client
// never makes (its requests and reply bodies are all of known types).
func typeName(any) string { return "(a type the browser build does not name)" }
