package readyfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWriteRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		info readyfile.Info
		want string // the file's text
	}{
		{name: "plain", info: readyfile.Info{URL: "ws://127.0.0.1:1", Listen: "127.0.0.1:1", AppKeys: []string{"demo"}, PID: 7},
			want: `{"url":"ws://127.0.0.1:1","listen":"127.0.0.1:1","appkeys":["demo"],"pid":7}` + "\n"},
		{name: "tls and admin", info: readyfile.Info{URL: "wss://example.com", Listen: "[::]:443", Admin: "127.0.0.1:9090",
			HTTP: "[::]:80", AppKeys: []string{"a", "b"}, PID: 8},
			want: `{"url":"wss://example.com","listen":"[::]:443","admin":"127.0.0.1:9090","http":"[::]:80","appkeys":["a","b"],"pid":8}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "ready.json")
			// A file already there (a killed edge's) is replaced.
			if err := os.WriteFile(path, []byte("stale"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := readyfile.Write(path, tt.info); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != tt.want {
				t.Errorf("file = %q, %v; want %q", b, err, tt.want)
			}
			got, err := readyfile.Read(path)
			if err != nil || !reflect.DeepEqual(got, tt.info) {
				t.Errorf("Read = %+v, %v; want %+v", got, err, tt.info)
			}
			// Nothing is left beside it.
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("directory holds %v, want the file alone", ents)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := readyfile.Read(filepath.Join(dir, "none.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of no file: %v, want fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readyfile.Read(bad); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a truncated file: %v, want a decoding error", err)
	}
}

func TestWriteIntoMissingDirectory(t *testing.T) {
	t.Parallel()
	if err := readyfile.Write(filepath.Join(t.TempDir(), "no", "ready.json"), readyfile.Info{}); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}
