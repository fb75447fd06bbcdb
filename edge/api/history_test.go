package api_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// historyOf pages through a channel's history with a body's first page,
// following next, and returns the messages as JSON texts.
func (e *edge) historyOf(t testing.TB, key, first string) (messages, positions []string, pages int) {
	t.Helper()
	body := first
	for {
		var page struct {
			Messages []struct {
				Position string          `json:"position"`
				Message  json.RawMessage `json:"message"`
			} `json:"messages"`
			Next string `json:"next"`
		}
		a := e.call(t, "history", key, body)
		if a.status != 200 || json.Unmarshal([]byte(a.raw), &page) != nil {
			t.Fatalf("history %s: %d %s", body, a.status, a.raw)
		}
		pages++
		for _, m := range page.Messages {
			messages = append(messages, string(m.Message))
			positions = append(positions, m.Position)
		}
		if page.Next == "" {
			return messages, positions, pages
		}
		if pages > 100 {
			t.Fatal("history does not end")
		}
		var req map[string]any
		_ = json.Unmarshal([]byte(first), &req)
		delete(req, "count")
		req["position"] = page.Next
		b, _ := json.Marshal(req)
		body = string(b)
	}
}

// TestHistory: the newest N, or from a position, oldest first, in pages
// that follow one another without loss or repetition.
func TestHistory(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	var all []string
	var first string
	for i := 1; i <= 7; i++ {
		got := e.ok(t, "publish", alphaKey, `{"channel":"h","message":`+strconv.Itoa(i)+`}`)
		if i == 1 {
			first = got["position"].(string)
		}
		all = append(all, strconv.Itoa(i))
	}
	tests := []struct {
		name, body string
		want       []string
		pages      int
	}{
		{name: "newest 3", body: `{"channel":"h","count":3}`, want: all[4:], pages: 1},
		{name: "newest 5 by 2", body: `{"channel":"h","count":5,"limit":2}`, want: all[2:], pages: 3},
		{name: "more than there are", body: `{"channel":"h","count":50}`, want: all, pages: 1},
		{name: "from the first by 3", body: `{"channel":"h","position":"` + first + `","limit":3}`, want: all, pages: 3},
		{name: "unknown channel", body: `{"channel":"none","count":5}`, want: nil, pages: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, positions, pages := e.historyOf(t, alphaKey, tt.body)
			if strings.Join(got, ",") != strings.Join(tt.want, ",") || pages != tt.pages {
				t.Fatalf("history %s = %v in %d pages, want %v in %d", tt.body, got, pages, tt.want, tt.pages)
			}
			for i, p := range positions {
				at := e.ok(t, "read", alphaKey, `{"channel":"h","position":"`+p+`"}`)
				if at["position"] != p || strconv.Itoa(int(mustNumber(t, at["message"]))) != got[i] {
					t.Fatalf("message %s is at %s by history, read there answers %v", got[i], p, at)
				}
			}
		})
	}
	for _, bad := range []string{
		`{"channel":"h"}`, `{"channel":"h","count":1,"position":"` + first + `"}`, `{"channel":"h","count":1001}`,
		`{"channel":"h","count":1,"limit":-1}`, `{"channel":"h","position":"x"}`, `{"channel":"","count":1}`,
	} {
		e.call(t, "history", alphaKey, bad).refused(t, 400, "invalid_format")
	}
	e.call(t, "history", alphaKey, `{"channel":"h","position":"1:1"}`).refused(t, 410, "expired_position")
}

func mustNumber(t testing.TB, v any) int64 {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatalf("%v is not an integer", v)
	}
	return n
}
