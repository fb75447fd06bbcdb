package loadgen

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Scenario names a load shape.
type Scenario string

// The scenarios.
const (
	// Fanout: one channel, Publishers publishing, Subscribers reading.
	Fanout Scenario = "fanout"
	// Channels: Channels channels, Subscribers spread evenly over them,
	// Publishers each publishing round-robin to their share of them.
	Channels Scenario = "channels"
	// Idle: Subscribers connections, each subscribed, held for Duration
	// with no traffic: what a connection costs the server.
	Idle Scenario = "idle"
	// Publish: acknowledged publishes as fast as the server answers,
	// Inflight at a time per publisher; subscribers optional.
	Publish Scenario = "publish"
	// Soak: the channels scenario held for a long time at a steady Rate,
	// with Churn subscribers a second killed (their connections reset)
	// and resumed by position, and the server's memory and goroutines
	// sampled every SampleInterval: whether anything is lost, repeated or
	// reordered across the kills, and whether the server grows.
	Soak Scenario = "soak"
)

// Scenarios lists the scenarios, for help texts.
var Scenarios = []Scenario{Fanout, Channels, Idle, Publish, Soak}

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("loadgen: invalid config")

// Config describes one run. The zero value of a field means its default,
// which depends on the scenario (see WithDefaults).
type Config struct {
	Scenario Scenario `json:"scenario"`
	// Publishers is the number of publishing connections. Default 1
	// (channels: 2; idle: none).
	Publishers int `json:"publishers"`
	// Subscribers is the number of subscribing connections, one
	// subscription each. Default 100 (channels: 2 per channel; idle:
	// 1,000; publish: none, and -1 means none for every scenario).
	Subscribers int `json:"subscribers"`
	// Channels is how many channels the subscribers spread over (fanout:
	// always 1). Default: channels 100; idle 1; publish one per publisher.
	Channels int `json:"channels"`
	// MessageBytes is the size of each message, at least StampSize
	// (feed: at least a feed message of one level, and then about that
	// size). Default 128 (feed: 2,048).
	MessageBytes int `json:"message_bytes"`
	// Payload is what the messages hold: PayloadPadded (the default) or
	// PayloadFeed.
	Payload string `json:"payload"`
	// Rate is the total publishing rate, messages per second over all
	// publishers; 0 publishes as fast as Window allows.
	Rate float64 `json:"rate"`
	// Window is how many messages a publishing lane keeps in flight
	// (published but not yet received by every subscriber of its
	// channel). Default 64.
	Window int `json:"window"`
	// Inflight is how many lanes each publisher runs: sequences of
	// publishes, each with its own publisher id in the stamps and
	// waiting for its own acknowledgments, so that a publisher has
	// Inflight publishes outstanding and each lane's messages stay in
	// order. Default 8 (fanout and channels: 64, publish: 16): enough
	// that the acknowledgments' round trips do not bound the rate. (A
	// fanout publisher's acknowledgment waits behind a thousand
	// deliveries; with 8 lanes the rate measured the round trip, not
	// the server.)
	Inflight int `json:"inflight"`
	// NoAck publishes without acknowledgment (the driver must implement
	// NoAckPublisher); default acknowledged.
	NoAck bool `json:"no_ack"`
	// ConnectRate bounds the new connections per second while ramping up
	// the subscribers; 0 does not bound it.
	ConnectRate float64 `json:"connect_rate"`
	// ConnectWorkers is how many connections are being opened at once.
	// Default 256: each attempt waits on both processes' schedulers for
	// a few milliseconds, so a ramp needs that many in flight to keep two
	// cores busy.
	ConnectWorkers int `json:"connect_workers"`
	// Warmup runs the publishers before the measured window. Default 1s
	// (idle: none); negative: none.
	Warmup time.Duration `json:"warmup_ns"`
	// Duration is the measured window (idle: how long connections are
	// held). Default 10s.
	Duration time.Duration `json:"duration_ns"`
	// Drain is how long to wait, after the publishers stop, for messages
	// still in flight: the wait ends once none arrived for Drain (or after
	// ten times Drain). Default 3s; negative: no wait.
	Drain time.Duration `json:"drain_ns"`
	// Stall is how long a publisher waits for deliveries before writing
	// off the missing ones and going on. Default 5s.
	Stall time.Duration `json:"stall_ns"`
	// ChannelPrefix starts every channel name. Default "bench." and a
	// random run id, so runs never see each other's messages.
	ChannelPrefix string `json:"channel_prefix"`
	// Churn is how many subscribers a second, picked at random, have
	// their connection dropped abruptly (a TCP reset, no close frame),
	// from the warm-up until the publishers stop; each resumes by
	// position on a new connection (the driver's Conn must be a Killer).
	// Default 0 (soak: 4); negative: none.
	Churn float64 `json:"churn"`
	// SampleInterval is how often the server's memory and goroutines
	// are sampled over the measured window (Result.Resources). Default
	// none (soak: 2s); negative: none.
	SampleInterval time.Duration `json:"sample_interval_ns"`
}

// WithDefaults returns the configuration with its defaults filled in, or
// an error naming the first invalid field.
func (c Config) WithDefaults() (Config, error) {
	c.applyDefaults()
	if err := c.check(); err != nil {
		return c, fmt.Errorf("%w: %s %v", ErrConfig, c.Scenario, err)
	}
	return c, nil
}

// applyDefaults fills in zero fields.
func (c *Config) applyDefaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	switch c.Scenario {
	case Fanout:
		def(&c.Publishers, 1)
		def(&c.Subscribers, 100)
		def(&c.Inflight, 64)
		c.Channels = 1
	case Channels:
		def(&c.Publishers, 2)
		def(&c.Channels, 100)
		def(&c.Subscribers, 2*c.Channels)
		def(&c.Inflight, 64)
	case Idle:
		def(&c.Subscribers, 1000)
		def(&c.Channels, 1)
	case Publish:
		def(&c.Publishers, 1)
		def(&c.Subscribers, -1)
		def(&c.Channels, c.Publishers)
		def(&c.Inflight, 16)
	case Soak:
		c.soakDefaults()
	}
	c.Subscribers = max(c.Subscribers, 0)
	if c.Payload == "" {
		c.Payload = PayloadPadded
	}
	if c.Payload == PayloadFeed {
		def(&c.MessageBytes, 2048)
	}
	def(&c.MessageBytes, 128)
	def(&c.Window, 64)
	def(&c.Inflight, 8)
	def(&c.ConnectWorkers, 256)
	if c.Warmup == 0 && c.Scenario != Idle {
		c.Warmup = time.Second
	}
	c.Warmup = max(c.Warmup, 0)
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	defDur(&c.Duration, 10*time.Second)
	defDur(&c.Drain, 3*time.Second)
	c.Drain = max(c.Drain, 0)
	defDur(&c.Stall, 5*time.Second)
	c.Churn = max(c.Churn, 0)
	c.SampleInterval = max(c.SampleInterval, 0)
	if c.ChannelPrefix == "" {
		c.ChannelPrefix = "bench." + runID() + "."
	}
}

// check validates a configuration whose defaults are filled in.
func (c *Config) check() error {
	switch {
	case !slices.Contains(Scenarios, c.Scenario):
		return fmt.Errorf("unknown scenario (want one of %v)", Scenarios)
	case c.Publishers < 0 || c.Publishers*c.Inflight > 1<<16-1:
		return fmt.Errorf("publishers × inflight: %d is not in 0..65535", c.Publishers*c.Inflight)
	case c.Scenario == Idle && c.Publishers > 0:
		return errors.New("publishers: the idle scenario publishes nothing")
	case c.Scenario != Idle && c.Publishers == 0:
		return errors.New("publishers: at least one is needed")
	case c.Channels < 1:
		return fmt.Errorf("channels: %d is not positive", c.Channels)
	case !slices.Contains(Payloads, c.Payload):
		return fmt.Errorf("payload: %q is not one of %v", c.Payload, Payloads)
	case c.MessageBytes < StampSize:
		return fmt.Errorf("message size: %d bytes is below the %d-byte stamp", c.MessageBytes, StampSize)
	case c.Payload == PayloadFeed && c.MessageBytes < minFeedBytes:
		return fmt.Errorf("message size: %d bytes is below a %d-byte feed message", c.MessageBytes, minFeedBytes)
	case c.Rate < 0 || c.ConnectRate < 0:
		return errors.New("rates cannot be negative")
	case c.Window < 1 || c.Inflight < 1 || c.ConnectWorkers < 1:
		return errors.New("window, inflight and connect workers must be positive")
	case c.Duration < 0 || c.Stall < 0:
		return errors.New("duration and stall cannot be negative")
	case c.Churn > 0 && (c.Scenario == Idle || c.Subscribers == 0):
		return errors.New("churn: there are no subscribers with traffic to kill")
	case c.Scenario == Soak && c.Rate == 0:
		return errors.New("rate: a soak publishes at a steady rate")
	}
	return nil
}

// Connections returns how many connections the run opens.
func (c *Config) Connections() int { return c.Subscribers + c.Publishers }

// channel returns the name of channel i.
func (c *Config) channel(i int) string {
	return fmt.Sprintf("%s%s.%d", c.ChannelPrefix, c.Scenario, i)
}

// runID returns 8 random hex digits.
func runID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// The soak's defaults: 2,000 subscribers on 200 channels, two publishers
// at 1,000 messages a second in all, 4 kills a second, for 5 minutes.
const (
	soakSubscribers = 2000
	soakChannels    = 200
	soakRate        = 1000
	soakChurn       = 4
	soakDuration    = 5 * time.Minute
	soakSample      = 2 * time.Second
	// soakDrain is longer than the default drain: a subscriber killed
	// just before the publishers stopped is still reconnecting (the
	// client's backoff) and then catches up.
	soakDrain = 10 * time.Second
)

// soakDefaults fills in a soak's zero fields. A subscriber count of
// thousands stays well below the 20,000 open files a process may have:
// the generator holds one descriptor per connection, and so does the
// server.
func (c *Config) soakDefaults() {
	if c.Publishers == 0 {
		c.Publishers = 2
	}
	if c.Channels == 0 {
		c.Channels = soakChannels
	}
	if c.Subscribers == 0 {
		c.Subscribers = soakSubscribers * c.Channels / soakChannels
	}
	if c.Inflight == 0 {
		c.Inflight = 8
	}
	if c.Rate == 0 {
		c.Rate = soakRate
	}
	if c.Churn == 0 {
		c.Churn = soakChurn
	}
	if c.Duration == 0 {
		c.Duration = soakDuration
	}
	if c.Drain == 0 {
		c.Drain = soakDrain
	}
	if c.SampleInterval == 0 {
		c.SampleInterval = soakSample
	}
}
