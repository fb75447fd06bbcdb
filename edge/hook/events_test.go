package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// eventsBackend is a real HTTP server receiving event batches (signature
// checked by backend) on a channel; while down it answers 503 and reports
// each refused attempt on refused.
func eventsBackend(t *testing.T, down *atomic.Bool) (srv *httptest.Server, batches chan Batch, refused chan struct{}) {
	t.Helper()
	h, batches, refused := eventsHandler(t, down)
	srv = httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, batches, refused
}

func eventsHandler(t *testing.T, down *atomic.Bool) (h http.Handler, batches chan Batch, refused chan struct{}) {
	batches = make(chan Batch, 1000)
	refused = make(chan struct{}, 1000)
	h = backendHandler(t, func(w http.ResponseWriter, _ *http.Request, body []byte) {
		if down != nil && down.Load() {
			refused <- struct{}{}
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		var b Batch
		if err := json.Unmarshal(body, &b); err != nil {
			t.Errorf("batch %s: %v", body, err)
		}
		batches <- b
	})
	return h, batches, refused
}

// receive collects n events from batches, in arrival order, dropping
// repeated ids (at least once allows them).
func receive(t *testing.T, batches chan Batch, n int) []Event {
	t.Helper()
	var got []Event
	seen := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case b := <-batches:
			for _, ev := range b.Events {
				if !seen[ev.ID] {
					seen[ev.ID] = true
					got = append(got, ev)
				}
			}
		case <-deadline:
			t.Fatalf("received %d events of %d", len(got), n)
		}
	}
	return got
}

func checkOrder(t *testing.T, got []Event, n int) {
	t.Helper()
	for i, ev := range got {
		var d ChannelData
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Channel != fmt.Sprint("ch", i) || ev.Kind != KindChannelOccupied || ev.Appkey != "app" {
			t.Fatalf("event %d = %+v (%v), want channel_occupied of ch%d", i, ev, err, i)
		}
	}
	if len(got) != n {
		t.Fatalf("got %d events, want %d", len(got), n)
	}
}

func TestEventsRetriedUntilBackendUp(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	srv, batches, refused := eventsBackend(t, &down)
	h := newHooks(t, &Config{Events: EventsConfig{URL: srv.URL, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}})
	for i := range 5 {
		if err := h.Events().Post(KindChannelOccupied, ChannelData{Channel: fmt.Sprint("ch", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		<-refused
	}
	down.Store(false)
	checkOrder(t, receive(t, batches, 5), 5)
	h.Close(context.Background()) // the loop has counted the delivery once it ends
	if st := h.Stats().Events; st.Retries < 3 || st.Delivered != 5 || st.Dropped != 0 {
		t.Fatalf("stats = %+v, want >= 3 retries, 5 delivered, none dropped", st)
	}
}

func TestEventsRetriedUntilBackendListens(t *testing.T) {
	t.Parallel()
	// A port nobody listens on yet: every attempt is refused by the kernel.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	h := newHooks(t, &Config{Events: EventsConfig{URL: "http://" + addr + "/events", MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}})
	for i := range 3 {
		if err := h.Events().Post(KindChannelOccupied, ChannelData{Channel: fmt.Sprint("ch", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); h.Stats().Events.Retries < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no retries")
		}
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	handler, batches, _ := eventsHandler(t, nil)
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: handler}}
	srv.Start()
	t.Cleanup(srv.Close)
	checkOrder(t, receive(t, batches, 3), 3)
}

func TestEventsBatchedAndFlushedAtClose(t *testing.T) {
	t.Parallel()
	srv, batches, _ := eventsBackend(t, nil)
	h, err := New("app", &Config{Secret: testSecret, Events: EventsConfig{URL: srv.URL, Batch: 100, Flush: time.Hour}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if err := h.Events().Post(KindChannelOccupied, ChannelData{Channel: fmt.Sprint("ch", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// Two full batches leave at once; the last 50 wait for the flush
	// (an hour) or for Close, which delivers what is queued.
	got := receive(t, batches, 200)
	h.Close(context.Background())
	got = append(got, receive(t, batches, 50)...)
	checkOrder(t, got, 250)
	if st := h.Stats().Events; st.Batches != 3 || st.Delivered != 250 {
		t.Fatalf("stats = %+v, want 3 batches, 250 delivered", st)
	}
	if err := h.Events().Post(KindDisconnect, DisconnectData{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Post after Close = %v, want ErrClosed", err)
	}
}

func TestEventsQueueBoundedAndAbandoned(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	down.Store(true)
	srv, _, refused := eventsBackend(t, &down)
	h, err := New("app", &Config{Secret: testSecret, Events: EventsConfig{URL: srv.URL, Queue: 3, Flush: -1,
		MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Events().Post(KindChannelOccupied, ChannelData{Channel: "first"}); err != nil {
		t.Fatal(err)
	}
	<-refused // the first event is the loop's, being retried
	full := 0
	for i := range 10 {
		switch err := h.Events().Post(KindChannelVacated, ChannelData{Channel: fmt.Sprint("ch", i)}); {
		case errors.Is(err, ErrQueueFull):
			full++
		case err != nil:
			t.Fatal(err)
		}
	}
	if st := h.Stats().Events; full != 7 || st.Dropped != 7 || st.Pending != 3 {
		t.Fatalf("%d refused as full, stats %+v; want 7 dropped, 3 pending", full, st)
	}
	// Close at a deadline already passed abandons the retried batch and
	// the queue: every event is delivered or counted as dropped.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.Close(ctx)
	if st := h.Stats().Events; st.Queued != 4 || st.Delivered != 0 || st.Dropped != 11 || st.Pending != 0 {
		t.Fatalf("stats after Close = %+v; want 4 queued, 11 dropped", st)
	}
}

func TestEventsSkipUnlistedKinds(t *testing.T) {
	t.Parallel()
	srv, batches, _ := eventsBackend(t, nil)
	h := newHooks(t, &Config{Events: EventsConfig{URL: srv.URL, Kinds: []string{KindDisconnect}, Flush: -1}})
	if err := h.Events().Post(KindChannelOccupied, ChannelData{Channel: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Events().Post("bogus", nil); !errors.Is(err, ErrUnknownKind) {
		t.Fatalf("Post of an unknown kind = %v", err)
	}
	if err := h.Events().Post(KindDisconnect, DisconnectData{Connection: "c1", Code: 1000}); err != nil {
		t.Fatal(err)
	}
	got := receive(t, batches, 1)
	if got[0].Kind != KindDisconnect || string(got[0].Data) != `{"connection":"c1","code":1000}` {
		t.Fatalf("event = %+v %s", got[0], got[0].Data)
	}
	if st := h.Stats().Events; st.Queued != 1 {
		t.Fatalf("stats %+v: want the unlisted kind not queued", st)
	}
}
