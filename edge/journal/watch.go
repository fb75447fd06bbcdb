package journal

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A prefix watch (WatchPrefix) is the interest of a prefix subscription:
// every channel of an app whose name starts with a prefix, those that
// exist and those made later. A channel's name is one subject token
// (base64), so NATS wildcards cannot tell its prefixes apart: the watch
// subscribes to the app's every channel (sluicefeed.<stream>.<app>.*),
// one subscription per app however many prefixes it watches, and
// follows the channels whose names match as their messages come. Those
// that exist when it starts are listed from the stream and followed.
type appWatch struct {
	subs     [2]*nats.Subscription
	prefixes map[string]int // channel-name prefixes (store keys), counted
	// follows are the releases of the channels the watch follows, by key.
	follows map[string]func()
}

// WatchPrefix has the store hold every channel whose key starts with
// prefix (an app's key, a NUL, the start of a channel's name), those the
// stream holds now and those made later, until release. At most limit
// channels that exist are followed; more says there were more.
func (j *Journal) WatchPrefix(ctx context.Context, prefix string, limit int) (release func(), more bool, err error) {
	i := j.interest
	if i == nil {
		return func() {}, false, nil
	}
	app, _, ok := strings.Cut(prefix, "\x00")
	if !ok {
		return nil, false, fmt.Errorf("journal: watch %q: not a key prefix", prefix)
	}
	if err := i.addWatch(app, prefix); err != nil {
		return nil, false, err
	}
	release = sync.OnceFunc(func() { i.removeWatch(app, prefix) })
	keys, more, err := j.channelsUnder(ctx, prefix, limit)
	if err != nil || more {
		release()
		return nil, more, err
	}
	for _, key := range keys {
		if err := i.watchFollow(ctx, app, key); err != nil {
			release()
			return nil, false, err
		}
	}
	return release, false, nil
}

// addWatch registers prefix on app's watch, starting the watch if new.
func (i *interest) addWatch(app, prefix string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	w := i.watches[app]
	if w == nil {
		w = &appWatch{prefixes: make(map[string]int), follows: make(map[string]func())}
		base := i.j.feedSubject(i.j.appSubject(app))
		for n, s := range []string{base + ".*", base + ".*.purge"} {
			sub, err := i.j.nc.ChanSubscribe(s, i.in)
			if err != nil {
				w.unsubscribe()
				return fmt.Errorf("journal: watch %s: %w", s, err)
			}
			w.subs[n] = sub
		}
		if i.watches == nil {
			i.watches = make(map[string]*appWatch)
		}
		i.watches[app] = w
	}
	w.prefixes[prefix]++
	return nil
}

// removeWatch drops one registration of prefix; the app's watch ends
// with its last prefix, and the follows it made are released.
func (i *interest) removeWatch(app, prefix string) {
	i.mu.Lock()
	w := i.watches[app]
	if w == nil {
		i.mu.Unlock()
		return
	}
	if w.prefixes[prefix]--; w.prefixes[prefix] <= 0 {
		delete(w.prefixes, prefix)
	}
	var releases []func()
	for key, rel := range w.follows {
		if !w.covers(key) {
			releases = append(releases, rel)
			delete(w.follows, key)
		}
	}
	if len(w.prefixes) == 0 {
		w.unsubscribe()
		delete(i.watches, app)
	}
	i.mu.Unlock()
	for _, rel := range releases {
		rel()
	}
}

// covers reports whether one of the watch's prefixes starts key.
func (w *appWatch) covers(key string) bool {
	for p := range w.prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

func (w *appWatch) unsubscribe() {
	for _, s := range w.subs {
		if s != nil {
			_ = s.Unsubscribe()
		}
	}
}

// watchFollow follows key for app's watch, unless it does already.
func (i *interest) watchFollow(ctx context.Context, app, key string) error {
	i.mu.Lock()
	w := i.watches[app]
	had := w == nil || w.follows[key] != nil
	i.mu.Unlock()
	if had {
		return nil
	}
	rel, err := i.j.Follow(ctx, key)
	if err != nil {
		return err
	}
	i.mu.Lock()
	if w := i.watches[app]; w != nil && w.follows[key] == nil && w.covers(key) {
		w.follows[key] = rel
		rel = nil
	}
	i.mu.Unlock()
	if rel != nil {
		rel() // the watch ended, or another call followed it first
	}
	return nil
}

// watched starts, for a republished message of a channel nobody follows
// yet, a follow on behalf of the watch covering it, at the message's
// previous one; false if no watch covers it.
func (i *interest) watched(key string, fm feedMsg) (*follow, bool) {
	app, _, _ := strings.Cut(key, "\x00")
	i.mu.Lock()
	defer i.mu.Unlock()
	w := i.watches[app]
	if w == nil || !w.covers(key) {
		return nil, false
	}
	if f := i.fol[key]; f != nil {
		return f, true // followed meanwhile
	}
	f, err := i.newFollow(key)
	if err != nil {
		i.j.log.Warn("journal: interest feed: follow a watched channel", "subject", i.j.subject(key), "err", err)
		return nil, false
	}
	i.fol[key] = f
	f.refs++
	w.follows[key] = sync.OnceFunc(func() { i.release(f) })
	// The channel starts right before this message, as the store saw it
	// (under i.mu: an unfollow of the channel runs under it too).
	after := fm.prev
	if fm.purge {
		after = 0
	}
	err = i.st.Follow(key, after)
	f.mu.Lock()
	if err != nil {
		f.err = err
	} else {
		f.applied, f.started = after, true
	}
	f.mu.Unlock()
	close(f.ready)
	return f, true
}

// channelsUnder returns the keys of the stream's channels under prefix,
// at most limit (more: there are more).
func (j *Journal) channelsUnder(ctx context.Context, prefix string, limit int) (keys []string, more bool, err error) {
	app, _, _ := strings.Cut(prefix, "\x00")
	info, err := j.stream.Info(ctx, jetstream.WithSubjectFilter(j.appSubject(app)+".*"))
	if err != nil {
		return nil, false, fmt.Errorf("journal: list the channels under %q: %w", prefix, err)
	}
	for subj := range info.State.Subjects {
		key, ok := j.keyOf(subj)
		if !ok || !strings.HasPrefix(key, prefix) {
			continue
		}
		if len(keys) == limit {
			return keys, true, nil
		}
		keys = append(keys, key)
	}
	return keys, false, nil
}

// appSubject is the subject prefix of an app's channels: sluice.<app>.
func (j *Journal) appSubject(app string) string {
	s := j.subject(app + "\x00x")
	return s[:strings.LastIndexByte(s, '.')]
}
