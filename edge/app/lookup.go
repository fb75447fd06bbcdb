package app

import "github.com/sluicehq/sluice/edge/store"

// DemoKey is the appkey of the embedded demo app.
const DemoKey = "demo"

// StatsChannel is the reserved channel on which the edge publishes its own
// numbers every second (package sysstats), for dashboards.
const StatsChannel = "$sys.stats"

// Demo returns the embedded default app a single edge serves out of the
// box: appkey "demo", whose default role may publish and subscribe every
// channel not starting with '$' and subscribe to StatsChannel (the demo
// dashboard reads it), with the default message size, the store's default
// retention, no secret roles and no jwt key. It is meant for development:
// anyone who knows the appkey can use every ordinary channel.
func Demo() *App {
	return &App{
		Key:             DemoKey,
		MaxMessageBytes: DefaultMaxMessageBytes,
		Roles: map[string]*Role{
			DefaultRole: {
				Name: DefaultRole,
				Permissions: Permissions{
					Publish:   []string{"*"},
					Subscribe: []string{"*", StatsChannel},
				},
			},
		},
	}
}

// Role returns the role of that name, if the app has it.
func (a *App) Role(name string) (*Role, bool) {
	r, ok := a.Roles[name]
	return r, ok && r != nil
}

// DefaultPermissions returns the permissions of the default role, those of
// every connection before it authenticates; none if the app has no default
// role.
func (a *App) DefaultPermissions() Permissions {
	if r, ok := a.Role(DefaultRole); ok {
		return r.Permissions
	}
	return Permissions{}
}

// Retention returns the retention of a channel: that of the first channel
// rule whose pattern matches it (with the matching rules of MatchPattern,
// so "*" does not cover reserved channels), or the zero Retention, which
// means the store's defaults, when none does.
func (a *App) Retention(channel string) store.Retention {
	for i := range a.Channels {
		if MatchPattern(a.Channels[i].Pattern, channel) {
			return a.Channels[i].Retention
		}
	}
	return store.Retention{}
}

// MaxMessage returns the largest encoded message the app accepts:
// MaxMessageBytes, or DefaultMaxMessageBytes when it is not set.
func (a *App) MaxMessage() int {
	if a.MaxMessageBytes <= 0 {
		return DefaultMaxMessageBytes
	}
	return a.MaxMessageBytes
}
