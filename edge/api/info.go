package api

import (
	"net/http"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/presence"
)

// The storage of an edge, in InfoAnswer.Storage.
const (
	// StorageMemory: the edge keeps its channels in memory alone; a
	// restart loses them.
	StorageMemory = "memory"
	// StorageJetStream: NATS JetStream is the log of record (a durable
	// edge, or one of a cluster).
	StorageJetStream = "jetstream"
)

// InfoAnswer is the answer of info: the edge's numbers, its log's and its
// cluster's when it has one, and the app's.
type InfoAnswer struct {
	Connections   int64  `json:"connections"`
	Subscriptions int64  `json:"subscriptions"`
	Channels      int64  `json:"channels"`
	MessagesIn    uint64 `json:"messages_in"`
	MessagesOut   uint64 `json:"messages_out"`
	// Presence is this edge's own presence: the rooms it knows, its
	// members and their connections.
	Presence PresenceInfo `json:"presence"`
	// Storage is StorageMemory or StorageJetStream.
	Storage string `json:"storage"`
	// Journal is the stream and this edge's progress in it (JetStream
	// only); Node the embedded NATS node and its cluster (an embedded
	// node only: not with an external NATS).
	Journal *journal.Info `json:"journal,omitempty"`
	// Partitions are every partition's journal, in order, in a log of
	// more than one (Journal is the first's).
	Partitions []journal.Info    `json:"partitions,omitempty"`
	Node       *journal.NodeInfo `json:"node,omitempty"`
	App        AppInfo           `json:"app"`
}

// PresenceInfo is presence.Totals in JSON.
type PresenceInfo struct {
	Rooms       int `json:"rooms"`
	Members     int `json:"members"`
	Connections int `json:"connections"`
}

// AppInfo is the calling app's share of InfoAnswer.
type AppInfo struct {
	Appkey      string `json:"appkey"`
	Channels    int64  `json:"channels"`
	MessagesIn  uint64 `json:"messages_in"`
	MessagesOut uint64 `json:"messages_out"`
}

// info returns the edge's numbers (server.Stats), its log's and cluster's,
// and the app's. A log that does not describe its stream in time still
// gets an answer, with journal.available false.
func (h *Handler) info(r *http.Request, appKey string, body []byte) (any, error) {
	var req struct{}
	if err := decode(body, &req); err != nil {
		return nil, err
	}
	st := h.srv.Stats()
	out := &InfoAnswer{Connections: st.Connections, Subscriptions: st.Subscriptions, App: AppInfo{Appkey: appKey},
		Presence: presenceInfo(h.srv.PresenceTotals()), Storage: StorageMemory}
	for i := range st.MessagesIn {
		out.MessagesIn += st.MessagesIn[i]
		out.MessagesOut += st.MessagesOut[i]
	}
	for _, k := range h.srv.AppKeys() {
		n := h.srv.Store().Channels(k)
		out.Channels += n
		if k == appKey {
			out.App.Channels = n
		}
	}
	for _, a := range st.Apps {
		if a.Appkey == appKey {
			out.App.MessagesIn, out.App.MessagesOut = a.MessagesIn, a.MessagesOut
		}
	}
	for p, j := range h.journals {
		out.Storage = StorageJetStream
		ji, err := j.Info(r.Context())
		if err != nil {
			h.log.Warn("api: info: the stream did not answer", "stream", j.Stream(), "err", err)
		}
		if p == 0 {
			out.Journal = &ji
		}
		if len(h.journals) > 1 {
			out.Partitions = append(out.Partitions, ji)
		}
	}
	if h.node != nil {
		ni, err := h.node.Info()
		if err != nil {
			h.log.Warn("api: info: the NATS node did not answer", "err", err)
		}
		out.Node = &ni
	}
	return out, nil
}

func presenceInfo(t presence.Totals) PresenceInfo {
	return PresenceInfo{Rooms: t.Rooms, Members: t.Members, Connections: t.Connections}
}
