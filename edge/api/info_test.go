package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
)

// field is one expected field of an answer, by its path ("journal.lag").
type field struct{ path, want string }

// lookup returns the JSON value at path in m, as text ("" when absent).
func lookup(m map[string]any, path string) string {
	var v any = m
	for _, k := range splitPath(path) {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if v, ok = obj[k]; !ok {
			return ""
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func splitPath(p string) []string {
	var out []string
	start := 0
	for i := range len(p) {
		if p[i] == '.' {
			out = append(out, p[start:i])
			start = i + 1
		}
	}
	return append(out, p[start:])
}

func checkFields(t *testing.T, got map[string]any, want []field) {
	t.Helper()
	for _, f := range want {
		if g := lookup(got, f.path); g != f.want {
			t.Errorf("%s = %s, want %s", f.path, g, f.want)
		}
	}
	if t.Failed() {
		raw, _ := json.Marshal(got)
		t.Logf("answer: %s", raw)
	}
}

// TestInfoMemory: an edge in memory says so, has no journal or node, and
// counts its presence: rooms, members and their connections (anonymous
// ones included).
func TestInfoMemory(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	e.member(t, "ann", `"Ann"`, "room")
	e.member(t, "ann", `"Ann"`, "room")
	e.member(t, "", "", "room")
	e.member(t, "bob", "", "hall")
	got := e.ok(t, "info", alphaKey, "{}")
	checkFields(t, got, []field{
		{"storage", "memory"},
		{"journal", ""},
		{"node", ""},
		{"connections", "4"},
		{"subscriptions", "4"},
		{"presence.rooms", "2"},
		{"presence.members", "2"},
		{"presence.connections", "4"},
	})
}

// TestInfoNode: on a durable single node, info describes the stream (its
// size and sequences), this edge's progress in it (applied, lag 0 once
// its own publishes are acknowledged) and the node, which is no cluster's.
func TestInfoNode(t *testing.T) {
	t.Parallel()
	e := startJournalEdge(t)
	for i := 1; i <= 3; i++ {
		e.ok(t, "publish", alphaKey, `{"channel":"n","message":`+strconv.Itoa(i)+`}`)
	}
	got := e.ok(t, "info", alphaKey, "{}")
	if b, err := strconv.Atoi(lookup(got, "journal.bytes")); err != nil || b <= 0 {
		t.Errorf("journal.bytes = %s, want a positive number", lookup(got, "journal.bytes"))
	}
	checkFields(t, got, []field{
		{"storage", "jetstream"},
		{"journal.stream", journal.DefaultStream},
		{"journal.connected", "true"},
		{"journal.available", "true"},
		{"journal.server", "sluice"},
		{"journal.replicas", "1"},
		{"journal.messages", "3"},
		{"journal.first_seq", "1"},
		{"journal.last_seq", "3"},
		{"journal.applied", "3"},
		{"journal.lag", "0"},
		{"journal.cluster", ""},
		{"node.name", "sluice"},
		{"node.cluster", ""},
		{"node.meta_leader", ""},
		{"node.peers", ""},
		{"app.messages_in", "3"},
	})
}

// TestInfoCluster: an edge of a three-node cluster names its node, the
// cluster, its peers and meta leader, and the stream's leader and three
// replicas, each current; the stream's numbers are the cluster's, so
// another edge's publishes count, and this edge's lag is 0 once it
// applied them.
func TestInfoCluster(t *testing.T) {
	t.Parallel()
	nodes := journaltest.Cluster(t, 3)
	e := startJournalEdgeWith(t, nodes[0], &journal.Options{Replicas: 3})
	other := startJournalEdgeWith(t, nodes[1], &journal.Options{Replicas: 3})
	e.ok(t, "publish", alphaKey, `{"channel":"c","message":1}`)
	other.ok(t, "publish", alphaKey, `{"channel":"c","message":2}`)
	var got map[string]any
	poll.UntilNil(t, "info showing the cluster settled", func() error {
		got = e.ok(t, "info", alphaKey, "{}")
		if lookup(got, "node.meta_leader") == "" || lookup(got, "journal.leader") == "" {
			return fmt.Errorf("no leaders yet: %v", got)
		}
		if lookup(got, "journal.lag") != "0" {
			return fmt.Errorf("lag %s", lookup(got, "journal.lag"))
		}
		peers, _ := got["journal"].(map[string]any)["peers"].([]any)
		for _, p := range peers {
			if p.(map[string]any)["current"] != true {
				return fmt.Errorf("a replica is not current: %v", peers)
			}
		}
		if len(peers) != 3 {
			return fmt.Errorf("peers %v", peers)
		}
		return nil
	})
	names := []string{"n0", "n1", "n2"}
	if l := lookup(got, "node.meta_leader"); !slices.Contains(names, l) {
		t.Errorf("node.meta_leader = %q, not one of %v", l, names)
	}
	leader := lookup(got, "journal.leader")
	if !slices.Contains(names, leader) {
		t.Errorf("journal.leader = %q, not one of %v", leader, names)
	}
	var peerNames []string
	for _, p := range got["journal"].(map[string]any)["peers"].([]any) {
		pm := p.(map[string]any)
		peerNames = append(peerNames, pm["name"].(string))
		if isLeader := pm["leader"] == true; isLeader != (pm["name"] == leader) {
			t.Errorf("peer %v: leader flag %v, the stream's leader is %s", pm["name"], pm["leader"], leader)
		}
	}
	slices.Sort(peerNames)
	if !slices.Equal(peerNames, names) {
		t.Errorf("journal.peers %v, want %v", peerNames, names)
	}
	checkFields(t, got, []field{
		{"storage", "jetstream"},
		{"node.name", "n0"},
		{"node.cluster", "test"},
		{"node.peers", `["n0","n1","n2"]`},
		{"node.cluster_size", "3"},
		{"journal.server", "n0"},
		{"journal.cluster", "test"},
		{"journal.available", "true"},
		{"journal.replicas", "3"},
		{"journal.messages", "2"},
		{"journal.first_seq", "1"},
		{"journal.last_seq", "2"},
		{"journal.applied", "2"},
		{"journal.lag", "0"},
		{"app.messages_in", "1"},
	})
}
