package journal

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestNewestLeavesOutPurgedMessages: a copy of the log that holds a
// channel's purge marker but has not applied the stream's purge yet
// (the marker is stored first) still holds the purged message; Newest
// must not answer it. The marker is published here without the purge
// that follows it, as such a copy holds them. A message after the
// marker is the newest again.
func TestNewestLeavesOutPurgedMessages(t *testing.T) {
	n := node(t, "")
	j, _ := open(t, n, nil)
	const key = "app\x00n"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// An empty stream: nothing to reach, nothing found.
	if _, found, reached, err := j.Newest(ctx, key, 0); err != nil || found || !reached {
		t.Fatalf("Newest of an empty stream: found %v reached %v, %v; want reached, nothing found", found, reached, err)
	}
	s1 := publish(t, j, key, "a")
	f, found, reached, err := j.Newest(ctx, key, s1)
	if err != nil || !found || !reached || f.Offset != s1 || string(f.Data) != "a" {
		t.Fatalf("Newest = %d %q found %v reached %v, %v; want %d \"a\"", f.Offset, f.Data, found, reached, err, s1)
	}

	ack, err := j.js.Publish(ctx, unpartitioned.purgeSubject(key), []byte(strconv.FormatUint(s1, 10)))
	if err != nil {
		t.Fatal(err)
	}
	f, found, reached, err = j.Newest(ctx, key, ack.Sequence)
	if err != nil || found || !reached {
		t.Fatalf("after a marker purging %d: Newest = %d %q found %v reached %v, %v; want nothing found", s1, f.Offset, f.Data, found, reached, err)
	}

	s2 := publish(t, j, key, "b")
	f, found, reached, err = j.Newest(ctx, key, s2)
	if err != nil || !found || !reached || f.Offset != s2 {
		t.Fatalf("after a message past the marker: Newest = %d found %v reached %v, %v; want %d", f.Offset, found, reached, err, s2)
	}
}

// TestNewestSaysACopyLags: an answer from a copy that has not reached
// the offset the reader needs is no answer, with a message for the
// channel or without one.
func TestNewestSaysACopyLags(t *testing.T) {
	n := node(t, "")
	j, _ := open(t, n, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s1 := publish(t, j, "app\x00lag", "a")
	for _, key := range []string{"app\x00lag", "app\x00never"} {
		if _, _, reached, err := j.Newest(ctx, key, s1+1); err != nil || reached {
			t.Errorf("%q: Newest past the stream's last offset: reached %v, %v; want not reached", key, reached, err)
		}
		if _, _, reached, err := j.Newest(ctx, key, s1); err != nil || !reached {
			t.Errorf("%q: Newest at the stream's last offset: reached %v, %v; want reached", key, reached, err)
		}
	}
}
