//go:build js && wasm

package bridge

import (
	"context"
	"strconv"
	"syscall/js"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// defaultTimeout bounds each request, including the wait for a
// connection while the client reconnects, so every Promise settles.
const defaultTimeout = 30 * time.Second

// timeoutSetting is a client's per-request timeout.
type timeoutSetting time.Duration

// context returns a context for one request.
func (t timeoutSetting) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), time.Duration(t))
}

// options reads a JavaScript options object; undefined and null read as
// empty.
type options struct{ v js.Value }

func (o options) get(name string) (js.Value, bool) {
	if t, ok := typeOf(o.v); !ok || t != js.TypeObject {
		return js.Undefined(), false
	}
	f := o.v.Get(name)
	t, ok := typeOf(f)
	return f, ok && t != js.TypeUndefined && t != js.TypeNull
}

func (o options) str(name string) (string, error) {
	f, ok := o.get(name)
	if !ok {
		return "", nil
	}
	return stringArg(f, name)
}

func (o options) num(name string) (float64, error) {
	f, ok := o.get(name)
	if !ok {
		return 0, nil
	}
	if t, _ := typeOf(f); t != js.TypeNumber || f.Float() < 0 {
		return 0, errtext.Kind(client.ErrOptions, name+" must be a number >= 0")
	}
	return f.Float(), nil
}

func (o options) millis(name string) (time.Duration, error) {
	n, err := o.num(name)
	return time.Duration(n * float64(time.Millisecond)), err
}

func (o options) flag(name string) bool {
	f, ok := o.get(name)
	return ok && f.Truthy()
}

// checkCredentials refuses credentials that do not go together, naming
// connect's options: the client's own check names its Go fields
// (RoleSecret), which a JavaScript caller never set.
func checkCredentials(co *client.Options) error {
	hasToken := co.Token != "" || co.TokenFunc != nil
	switch {
	case co.Role != "" && hasToken:
		return errtext.Kind(client.ErrOptions, "set the option token or the option role, not both")
	case co.Role != "" && co.RoleSecret == "":
		return errtext.Kind(client.ErrOptions, "the option role "+strconv.Quote(co.Role)+" needs the option secret (the role's secret)")
	case co.Role == "" && co.RoleSecret != "":
		return errtext.Kind(client.ErrOptions, "the option secret needs the option role (the role it is the secret of)")
	}
	return nil
}

// clientOptions reads connect's options: appkey, role, secret, token (a
// string or a function, see tokenOption),
// minBackoff, maxBackoff, dialTimeout and timeout (milliseconds),
// deliveryBufferBytes, logLevel.
func clientOptions(v js.Value) (client.Options, timeoutSetting, error) {
	o := options{v}
	var co client.Options
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"appkey", &co.AppKey}, {"role", &co.Role}, {"secret", &co.RoleSecret}} {
		if *f.dst, err = o.str(f.name); err != nil {
			return co, 0, err
		}
	}
	if err := tokenOption(o, &co); err != nil {
		return co, 0, err
	}
	if err := checkCredentials(&co); err != nil {
		return co, 0, err
	}
	for _, f := range []struct {
		name string
		dst  *time.Duration
	}{{"minBackoff", &co.MinBackoff}, {"maxBackoff", &co.MaxBackoff}, {"dialTimeout", &co.DialTimeout}} {
		if *f.dst, err = o.millis(f.name); err != nil {
			return co, 0, err
		}
	}
	timeout, err := o.millis("timeout")
	if err != nil {
		return co, 0, err
	}
	if timeout == 0 {
		timeout = defaultTimeout
	}
	buf, err := o.num("deliveryBufferBytes")
	if err != nil {
		return co, 0, err
	}
	co.DeliveryBufferBytes = int(buf)
	level, err := o.str("logLevel")
	if err != nil {
		return co, 0, err
	}
	if co.Logger, err = logger(level); err != nil {
		return co, 0, err
	}
	return co, timeoutSetting(timeout), nil
}

// logger returns a console logger for a level name.
func logger(level string) (*client.Logger, error) {
	levels := map[string]client.LogLevel{
		"": client.LogWarn, "debug": client.LogDebug, "info": client.LogInfo,
		"warn": client.LogWarn, "error": client.LogError, "off": client.LogOff,
	}
	l, ok := levels[level]
	if !ok {
		return nil, errtext.Kind(client.ErrOptions, "logLevel "+strconv.Quote(level)+": want debug, info, warn, error or off")
	}
	return client.NewLogger(l, nil), nil
}

// subscribeOptions reads subscribe's options: id, position, history
// {count, age (seconds)}, fastForward, strict, force, filter, period
// (seconds), onlyChanges, prefix, presence, delta.
func subscribeOptions(v js.Value) (*client.SubscribeOptions, error) {
	o := options{v}
	so := &client.SubscribeOptions{FastForward: o.flag("fastForward"), Strict: o.flag("strict"), Force: o.flag("force"),
		OnlyChanges: o.flag("onlyChanges"), Prefix: o.flag("prefix"), Presence: o.flag("presence"), Delta: o.flag("delta")}
	var err error
	if so.ID, err = o.str("id"); err != nil {
		return nil, err
	}
	if so.Filter, err = o.str("filter"); err != nil {
		return nil, err
	}
	pos, err := o.str("position")
	if err != nil {
		return nil, err
	}
	if pos != "" {
		p, err := rtm.ParsePosition(pos)
		if err != nil {
			return nil, errtext.Kind(client.ErrOptions, "position "+strconv.Quote(pos)+": "+err.Error())
		}
		so.Position = &p
	}
	period, err := o.num("period")
	if err != nil {
		return nil, err
	}
	so.Period = time.Duration(period * float64(time.Second))
	if h, ok := o.get("history"); ok {
		ho := options{h}
		count, err := ho.num("count")
		if err != nil {
			return nil, err
		}
		age, err := ho.num("age")
		if err != nil {
			return nil, err
		}
		so.HistoryCount, so.HistoryAge = int(count), time.Duration(age*float64(time.Second))
	}
	return so, nil
}
