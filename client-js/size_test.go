package clientjs

import (
	"bytes"
	"io"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/sluicehq/sluice/client-js/internal/wasmsize"
)

// TestWasmSizeBudget fails when the committed sluice.wasm passes its size
// budget (package wasmsize), gzipped or brotli-compressed: every page
// that uses Sluice downloads it.
func TestWasmSizeBudget(t *testing.T) {
	br, err := Files.ReadFile("dist/sluice.wasm.br")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(brotli.NewReader(bytes.NewReader(br)))
	if err != nil {
		t.Fatalf("dist/sluice.wasm.br: %v", err)
	}
	gz := wasmsize.Gzip(raw)
	t.Logf("\n%s", wasmsize.Report(len(raw), gz, len(br)))
	if gz > wasmsize.GzipBudget {
		t.Errorf("sluice.wasm is %d bytes gzipped, over its budget of %d (client-js/internal/wasmsize)", gz, wasmsize.GzipBudget)
	}
	if len(br) > wasmsize.BrotliBudget {
		t.Errorf("sluice.wasm.br is %d bytes, over its budget of %d (client-js/internal/wasmsize)", len(br), wasmsize.BrotliBudget)
	}
}
