package client

import "math/bits"

// This file is MD5 (RFC 1321) and HMAC (RFC 2104) in a few lines, for the
// browser build's role_secret proof only (see hmac_js.go); the native
// build uses crypto/hmac and crypto/md5, and the tests check that the two
// agree. MD5 is what RTM v2's role_secret method specifies: it proves
// knowledge of the secret for a single-use nonce, nothing more. Words are
// little-endian, written out rather than through encoding/binary, which
// would link reflect into the browser build.

// md5Shifts are the per-round rotation amounts.
var md5Shifts = [4][4]int{{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}}

// md5K are the constants floor(abs(sin(i+1)) * 2^32).
var md5K = [64]uint32{
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
}

// md5Sum returns the MD5 digest of the concatenation of parts.
func md5Sum(parts ...[]byte) [16]byte {
	var msg []byte
	for _, p := range parts {
		msg = append(msg, p...)
	}
	n := uint64(len(msg))
	msg = append(msg, 0x80)
	for len(msg)%64 != 56 {
		msg = append(msg, 0)
	}
	for i := range 8 { // the length in bits, little-endian
		msg = append(msg, byte(n*8>>(8*i)))
	}
	s := [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}
	for ; len(msg) > 0; msg = msg[64:] {
		md5Block(&s, msg[:64])
	}
	var out [16]byte
	for i, v := range s {
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	return out
}

// md5Block folds one 64-byte block into the state.
func md5Block(s *[4]uint32, block []byte) {
	var m [16]uint32
	for i := range m {
		w := block[4*i : 4*i+4]
		m[i] = uint32(w[0]) | uint32(w[1])<<8 | uint32(w[2])<<16 | uint32(w[3])<<24
	}
	a, b, c, d := s[0], s[1], s[2], s[3]
	for i := range 64 {
		var f uint32
		var g int
		switch i / 16 {
		case 0:
			f, g = (b&c)|(^b&d), i
		case 1:
			f, g = (d&b)|(^d&c), (5*i+1)%16
		case 2:
			f, g = b^c^d, (3*i+5)%16
		default:
			f, g = c^(b|^d), (7*i)%16
		}
		f += a + md5K[i] + m[g]
		a, d, c = d, c, b
		b += bits.RotateLeft32(f, md5Shifts[i/16][i%4])
	}
	s[0] += a
	s[1] += b
	s[2] += c
	s[3] += d
}

// hmacMD5 is HMAC (RFC 2104) over MD5, whose block is 64 bytes.
func hmacMD5(key, msg []byte) [16]byte {
	if len(key) > 64 {
		k := md5Sum(key)
		key = k[:]
	}
	var ipad, opad [64]byte
	copy(ipad[:], key)
	copy(opad[:], key)
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	inner := md5Sum(ipad[:], msg)
	return md5Sum(opad[:], inner[:])
}
