//go:build js && wasm

package bridge

import (
	"sync"
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// bridge holds what JavaScript refers to by number. Its functions live as
// long as the page: they are made once, by Export.
type bridge struct {
	mu      sync.Mutex // guards the fields below; never held across a call into the client or JavaScript
	next    int
	clients map[int]*clientEntry
	subs    map[int]*subEntry
}

// clientEntry is one connected client and its settings.
type clientEntry struct {
	c       *client.Client
	timeout timeoutSetting
}

// subEntry is one live subscription and the client it belongs to.
type subEntry struct {
	s   *client.Subscription
	cid int
}

// Export returns the object of functions client-js calls:
//
//	connect(url, options, onState) -> Promise<clientNumber>
//	publish(c, channel, value), write(c, channel, value) -> Promise<position>
//	delete(c, channel) -> Promise<position>
//	read(c, channel, {position}) -> Promise<{message, position}>
//	subscribe(c, channel, options, onMessage, onError, onInfo, onGap, onPresence)
//	    -> Promise<{sub, id, position}>
//	presence(c, channel, {after, limit}) -> Promise<{members, users, connections, next}>
//	unsubscribe(sub) -> Promise<undefined>
//	position(sub) -> string | null (synchronous)
//	state(c) -> string (synchronous)
//	suspend(c), resume(c) -> undefined (synchronous)
//	close(c) -> Promise<undefined>
//
// Values, options and callbacks are described in client-js/sluice.d.ts.
func Export() js.Value {
	b := &bridge{clients: make(map[int]*clientEntry), subs: make(map[int]*subEntry)}
	api := jsObject.New()
	// Set one by one rather than from a map literal: ranging over a map
	// runs Go's map code (building, growing, iterating), which V8 then
	// compiles on first call while the page waits for the client.
	set := func(name string, fn func([]js.Value) js.Value) { api.Set(name, export(fn)) }
	set("connect", b.connect)
	set("publish", b.publish)
	set("write", b.write)
	set("delete", b.delete)
	set("read", b.read)
	set("subscribe", b.subscribe)
	set("unsubscribe", b.unsubscribe)
	set("position", b.position)
	set("presence", b.presence)
	set("state", b.state)
	set("suspend", b.suspend)
	set("resume", b.resume)
	set("close", b.close)
	return api
}

// export wraps an API function: a panic in its synchronous part (reading
// arguments) becomes a rejected Promise too.
func export(fn func([]js.Value) js.Value) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) (result any) {
		defer func() {
			if r := recover(); r != nil {
				result = jsPromise.Call("reject", panicError(r))
			}
		}()
		return fn(args)
	})
}

// arg returns argument i, undefined when missing.
func arg(args []js.Value, i int) js.Value {
	if i < len(args) {
		return args[i]
	}
	return js.Undefined()
}

// add registers a client and returns its number.
func (b *bridge) add(e *clientEntry) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.next++
	b.clients[b.next] = e
	return b.next
}

// client returns the client numbered by args[0].
func (b *bridge) client(args []js.Value) (*clientEntry, int, error) {
	n := intArg(arg(args, 0))
	b.mu.Lock()
	e := b.clients[n]
	b.mu.Unlock()
	if e == nil {
		return nil, n, &handleError{what: "client", n: n}
	}
	return e, n, nil
}

// clientChannel returns the client numbered by args[0] and the channel
// name in args[1], as the calls on one channel take them.
func (b *bridge) clientChannel(args []js.Value) (*clientEntry, string, error) {
	e, _, err := b.client(args)
	if err != nil {
		return nil, "", err
	}
	channel, err := stringArg(arg(args, 1), "channel")
	if err != nil {
		return nil, "", err
	}
	return e, channel, nil
}

// sub returns the subscription numbered by args[0].
func (b *bridge) sub(args []js.Value) (*subEntry, int, error) {
	n := intArg(arg(args, 0))
	b.mu.Lock()
	e := b.subs[n]
	b.mu.Unlock()
	if e == nil {
		return nil, n, &handleError{what: "subscription", n: n}
	}
	return e, n, nil
}

// addSub registers a live subscription and forgets it once it ends.
func (b *bridge) addSub(s *client.Subscription, cid int) int {
	b.mu.Lock()
	b.next++
	n := b.next
	b.subs[n] = &subEntry{s: s, cid: cid}
	b.mu.Unlock()
	// Owned by the subscription: it ends at the latest when its client
	// closes.
	go func() {
		<-s.Done()
		b.mu.Lock()
		delete(b.subs, n)
		b.mu.Unlock()
	}()
	return n
}

// intArg reads a handle number; anything else is 0, which is never issued.
func intArg(v js.Value) int {
	if t, ok := typeOf(v); !ok || t != js.TypeNumber {
		return 0
	}
	return v.Int()
}

// stringArg reads a string argument.
func stringArg(v js.Value, what string) (string, error) {
	if t, ok := typeOf(v); !ok || t != js.TypeString {
		return "", errtext.Kind(client.ErrOptions, what+" must be a string")
	}
	return v.String(), nil
}
