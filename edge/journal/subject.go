package journal

import (
	"encoding/base64"
	"strings"
)

// Subject returns the subject of a store key (appkey NUL channel) in a
// log of one partition: sluice.<app>.<channel>.
func Subject(key string) string { return subjectIn(subjectPrefix, key) }

// partitionPrefix is the subject prefix of the channels of stream, a
// partition of a log in partitions: the stream's name (SLUICE-2.), so
// that no stream's subjects overlap another's, whether of another
// partition or of a log made with another count or name, which a change
// of cluster.partitions leaves beside the new one. A log of one
// partition keeps sluice., so that data directories made before
// partitions read on.
func partitionPrefix(partitions int, stream string) string {
	if partitions <= 1 {
		return subjectPrefix
	}
	return stream + "."
}

// subjectIn returns the subject of a store key under prefix: both tokens
// in unpadded base64url, so that any channel name (dots, stars, spaces)
// is one subject token.
func subjectIn(prefix, key string) string {
	app, channel, _ := strings.Cut(key, "\x00")
	enc := base64.RawURLEncoding
	b := make([]byte, 0, len(prefix)+enc.EncodedLen(len(app))+1+enc.EncodedLen(len(channel)))
	b = append(b, prefix...)
	b = enc.AppendEncode(b, []byte(app))
	b = append(b, '.')
	b = enc.AppendEncode(b, []byte(channel))
	return string(b)
}

// subject returns the subject of a store key in this journal's stream.
func (j *Journal) subject(key string) string { return subjectIn(j.prefix, key) }

// keyOf returns the store key of a subject of this journal's stream, or
// false if it is not a channel's.
func (j *Journal) keyOf(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, j.prefix)
	if !ok {
		return "", false
	}
	a, c, ok := strings.Cut(rest, ".")
	if !ok || a == "" || c == "" {
		return "", false
	}
	enc := base64.RawURLEncoding.Strict() // one subject per key
	b := make([]byte, 0, enc.DecodedLen(len(a))+1+enc.DecodedLen(len(c)))
	b, err := enc.AppendDecode(b, []byte(a))
	if err != nil {
		return "", false
	}
	b = append(b, 0)
	if b, err = enc.AppendDecode(b, []byte(c)); err != nil {
		return "", false
	}
	return string(b), true
}
