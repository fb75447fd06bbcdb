package api_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
)

// startJournalEdge serves the API of an edge whose log of record is a
// journal on an embedded NATS node.
func startJournalEdge(t *testing.T) *edge {
	t.Helper()
	j := journaltest.Open(t, journaltest.Node(t), nil)
	se := servertest.Start(t, &server.Options{Apps: testApps()}, j)
	mux := http.NewServeMux()
	mux.Handle("/v2", se.Server)
	mux.Handle(api.Prefix, api.New(se.Server, &api.Options{Logger: journaltest.Logger()}))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close) // registered last, so closed before the edge drains
	return &edge{srv: se.Server, url: hs.URL}
}

// TestJournalEdge: on a durable edge an API publish is acknowledged by
// the log and delivered to an RTM subscriber; read and history are
// answered from the log, including channels no one on the edge follows.
func TestJournalEdge(t *testing.T) {
	e := startJournalEdge(t)
	sub := e.subscribe(t, "alpha", "j")
	first := position(t, e.ok(t, "publish", alphaKey, `{"channel":"j","message":"one","idempotency_key":"k1"}`))
	if p := sub.next(); len(p.Body.Messages) != 1 || string(p.Body.Messages[0]) != `"one"` {
		t.Fatalf("subscriber got %+v", p)
	}
	if retry := position(t, e.ok(t, "publish", alphaKey, `{"channel":"j","message":"one","idempotency_key":"k1"}`)); retry != first {
		t.Fatalf("retry answered %s, first %s", retry, first)
	}
	for i := 2; i <= 4; i++ {
		e.ok(t, "publish", alphaKey, `{"channel":"unfollowed","message":`+strconv.Itoa(i)+`}`)
	}
	got, _, _ := e.historyOf(t, alphaKey, `{"channel":"unfollowed","count":2}`)
	if strings.Join(got, ",") != "3,4" {
		t.Fatalf("history of the newest 2 = %v", got)
	}
	got, _, pages := e.historyOf(t, alphaKey, `{"channel":"j","position":"`+first.String()+`","limit":1}`)
	if strings.Join(got, ",") != `"one"` || pages != 1 {
		t.Fatalf("history of j = %v in %d pages", got, pages)
	}
	if a := e.ok(t, "read", alphaKey, `{"channel":"j"}`); a["message"] != "one" || a["position"] != first.String() {
		t.Fatalf("read %v", a)
	}
}
