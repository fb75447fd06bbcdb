package app

import "testing"

func TestCanSubscribePrefix(t *testing.T) {
	t.Parallel()
	p := Permissions{Subscribe: []string{"news.*", "chat", "$sys.*"}}
	tests := []struct {
		name   string
		prefix string
		want   bool
	}{
		{"under a wildcard", "news.sport", true},
		{"the wildcard's own prefix", "news.", true},
		{"shorter than the wildcard", "news", false},
		{"an exact grant covers no prefix", "chat", false},
		{"a reserved prefix under a reserved wildcard", "$sys.stats", true},
		{"elsewhere", "other", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.CanSubscribePrefix(tt.prefix); got != tt.want {
				t.Errorf("CanSubscribePrefix(%q) = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
	all := Permissions{Subscribe: []string{"*"}}
	if !all.CanSubscribePrefix("a") || all.CanSubscribePrefix("$sys") {
		t.Error(`"*" must cover every ordinary prefix and no reserved one`)
	}
}
