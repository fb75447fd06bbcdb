package loadgen

import "testing"

// BenchmarkDeliver measures a subscriber's accounting of one message
// (ns/op is per delivery), as the delivery goroutines run it: each
// message of each lane goes to every subscriber of its channel in turn,
// so that the subscribers' state is as cold as with thousands of
// connections.
func BenchmarkDeliver(b *testing.B) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"fanout", Config{Scenario: Fanout, Subscribers: 1000}},
		{"channels", Config{Scenario: Channels, Channels: 5000, Subscribers: 10000}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			cfg, err := tt.cfg.WithDefaults()
			if err != nil {
				b.Fatal(err)
			}
			r := newRun(nil, cfg, nil)
			subs := make([][]*subscriber, cfg.Channels) // by channel
			perChannel := make([]int, cfg.Channels)
			for _, s := range r.subs {
				subs[s.channel] = append(subs[s.channel], s)
				perChannel[s.channel]++
			}
			for _, l := range r.lanes {
				l.setFanout(cfg.Window, perChannel)
			}
			// A round is one message on every channel of every lane.
			type message struct {
				payload string
				to      []*subscriber
			}
			var round []message
			for _, l := range r.lanes {
				for _, c := range l.channels {
					round = append(round, message{to: subs[c]})
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for n, seq := 0, uint64(1); n < b.N; seq++ {
				b.StopTimer()
				i := 0
				for _, l := range r.lanes {
					for range l.channels {
						round[i].payload = string(AppendPayload(nil, Stamp{Publisher: l.id, Seq: seq}, cfg.MessageBytes))
						i++
					}
				}
				b.StartTimer()
				for _, m := range round {
					for _, s := range m.to {
						s.deliver(m.payload)
					}
					n += len(m.to)
				}
			}
		})
	}
}
