package edgecmd

import (
	"errors"
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// SyncPolicy is cluster.sync: when the embedded node's JetStream fsyncs
// what it stores. "always" fsyncs every write before acknowledging it,
// so an acknowledged message survives a power loss; an interval ("1s",
// "2m") acknowledges what is in the operating system's page cache, which
// survives the edge's crash (kill -9) but not the machine's: a power loss
// of a single node loses up to that interval of acknowledged messages
// (docs/cluster.md, Durability on disk, says what a cluster survives).
// The zero value is the default, defaultSync.
type SyncPolicy struct {
	Always   bool
	Interval time.Duration
}

// defaultSync is what an unset cluster.sync means: an acknowledgment
// survives a power loss, at the price of an fsync each (docs/cluster.md
// has the figures).
var defaultSync = SyncPolicy{Always: true}

// set reports whether the policy was configured.
func (p SyncPolicy) set() bool { return p != SyncPolicy{} }

// orDefault returns the policy, or defaultSync when it is not set.
func (p SyncPolicy) orDefault() SyncPolicy {
	if !p.set() {
		return defaultSync
	}
	return p
}

// String is "always" or the interval in Go syntax ("" when unset).
func (p SyncPolicy) String() string {
	switch {
	case p.Always:
		return "always"
	case p.Interval != 0:
		return p.Interval.String()
	}
	return ""
}

// parseSync parses "always" or a positive interval.
func parseSync(s string) (SyncPolicy, error) {
	if s == "always" {
		return SyncPolicy{Always: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return SyncPolicy{}, fmt.Errorf("%q is neither always nor a positive interval such as \"1s\" or \"2m\"", s)
	}
	return SyncPolicy{Interval: d}, nil
}

// UnmarshalYAML accepts "always" or an interval.
func (p *SyncPolicy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &nodeError{n, errors.New("want always or an interval such as \"1s\"")}
	}
	v, err := parseSync(n.Value)
	if err != nil {
		return &nodeError{n, err}
	}
	*p = v
	return nil
}

// MarshalYAML writes the policy as String does.
func (p SyncPolicy) MarshalYAML() (any, error) { return p.String(), nil }

// IsZero lets omitempty leave an unset policy out.
func (p SyncPolicy) IsZero() bool { return !p.set() }

// checkSync checks cluster.sync, set in code or by the file: it is the
// embedded node's, so with an external NATS it is refused rather than
// silently ignored.
func (c *ClusterConfig) checkSync(external bool) error {
	p := c.Sync
	switch {
	case p.Always && p.Interval != 0 || p.Interval < 0:
		return fmt.Errorf("cluster.sync: want always or a positive interval, not %+v", p)
	case p.set() && external:
		return fmt.Errorf("cluster.sync: %s is the embedded node's: with nats.urls the NATS servers' own sync_interval applies (sync_interval: always in their jetstream block)", p)
	}
	return nil
}

// externalSyncWarning is the warning of an edge on an external NATS: how
// durable its acknowledgments are is the NATS servers' setting, which the
// edge cannot see, and NATS's default does not survive a power loss.
func (c *Config) externalSyncWarning() string {
	if len(c.NATS.URLs) == 0 {
		return ""
	}
	return "nats.urls: an acknowledged publish is as durable as the NATS servers' JetStream sync_interval makes it: NATS's default fsyncs every 2 minutes, so a power loss of the servers can lose acknowledged messages; set sync_interval: always in their jetstream block (docs/cluster.md, Durability on disk)"
}

// syncDesc is the banner's words for the embedded node's policy.
func syncDesc(p SyncPolicy) string {
	if p.Always {
		return ", fsync before every acknowledgment"
	}
	return ", fsync every " + p.Interval.String()
}
