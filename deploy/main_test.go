package deploy

import (
	"os"
	"testing"
)

// TestMain removes the images the container tests built, once all have
// run (they share them).
func TestMain(m *testing.M) {
	code := m.Run()
	if podmanRT != nil {
		podmanRT.close()
	}
	os.Exit(code)
}
