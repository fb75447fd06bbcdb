//go:build !js

package websocket

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestMask checks the word-at-a-time mask against the RFC's definition,
// byte i XOR key[i mod 4], for every length and start position, and that
// masking split at any point equals masking in one piece.
func TestMask(t *testing.T) {
	key := [4]byte{0x12, 0x9a, 0x5c, 0xe1}
	k := binary.LittleEndian.Uint32(key[:])
	for n := range 40 {
		for pos := range 4 {
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(i*7 + 3)
			}
			want := make([]byte, n)
			for i := range src {
				want[i] = src[i] ^ key[(pos+i)%4]
			}
			got := bytes.Clone(src)
			if end := mask(got, k, pos); end != (pos+n)%4 {
				t.Fatalf("n=%d pos=%d: end position %d, want %d", n, pos, end, (pos+n)%4)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("n=%d pos=%d: got %x want %x", n, pos, got, want)
			}
			for cut := range n + 1 {
				got := bytes.Clone(src)
				p := mask(got[:cut], k, pos)
				mask(got[cut:], k, p)
				if !bytes.Equal(got, want) {
					t.Fatalf("n=%d pos=%d cut=%d: got %x want %x", n, pos, cut, got, want)
				}
			}
		}
	}
}

// TestNewMaskKey checks that keys keep coming fresh across batch refills:
// among three batches' worth, no key repeats (a chance of about 1 in
// 60,000 for random 32-bit keys).
func TestNewMaskKey(t *testing.T) {
	n := 3 * maskKeyBatch / 4
	seen := make(map[uint32]bool, n)
	for range n {
		k := newMaskKey()
		if seen[k] {
			t.Fatalf("key %#x repeated within %d keys", k, n)
		}
		seen[k] = true
	}
}
