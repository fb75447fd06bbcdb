package edgecmd

import "testing"

// TestFeedDefault: edges that share the log are fed by interest unless
// configured otherwise; a single durable node, its stream's sole writer,
// applies everything it appends itself (all) unless configured otherwise.
func TestFeedDefault(t *testing.T) {
	for _, tc := range []struct {
		feed string
		sole bool
		want bool
	}{
		{feed: "", sole: false, want: true},
		{feed: "", sole: true, want: false},
		{feed: FeedAll, sole: false, want: false},
		{feed: FeedInterest, sole: true, want: true},
		{feed: FeedInterest, sole: false, want: true},
	} {
		cl := ClusterConfig{Feed: tc.feed}
		if got := cl.interest(tc.sole); got != tc.want {
			t.Errorf("feed %q, sole writer %v: interest %v, want %v", tc.feed, tc.sole, got, tc.want)
		}
	}
}
