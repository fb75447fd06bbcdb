package app

// DemoKey is the appkey of the embedded demo app.
const DemoKey = "demo"

// StatsChannel is the reserved channel on which the edge publishes its own
// numbers every second (package sysstats), for dashboards.
const StatsChannel = "$sys.stats"

// Demo returns the embedded default app a single edge serves out of the
// box: appkey "demo", whose default role may publish, subscribe and see
// the presence of every channel not starting with '$' and subscribe to
// StatsChannel (the demo
// dashboard reads it), with the default message size and channel limit, the store's default
// retention, no secret roles and no jwt key. It is meant for development:
// anyone who knows the appkey can use every ordinary channel.
func Demo() *App {
	return &App{
		Key:             DemoKey,
		MaxMessageBytes: DefaultMaxMessageBytes,
		MaxChannels:     DefaultMaxChannels,
		Roles: map[string]*Role{
			DefaultRole: {
				Name: DefaultRole,
				Permissions: Permissions{
					Publish:   []string{"*"},
					Subscribe: []string{"*", StatsChannel},
					Presence:  []string{"*"},
				},
			},
		},
	}
}
