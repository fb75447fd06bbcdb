package doctext

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFind(t *testing.T) {
	t.Parallel()
	doc := "# Page\n\n```sh\nfirst\n```\n\n## Two\n\n```yaml\na: 1\n```\n```sh\nsecond\n```\n"
	tests := []struct {
		name, marker, lang, want string
		fails                    bool
	}{
		{name: "first after the title", marker: "# Page", lang: "sh", want: "first\n"},
		{name: "after a later heading", marker: "## Two", lang: "sh", want: "second\n"},
		{name: "another language", marker: "# Page", lang: "yaml", want: "a: 1\n"},
		{name: "no marker", marker: "## Three", lang: "sh", fails: true},
		{name: "no block of that language", marker: "## Two", lang: "html", fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Find(doc, tt.marker, tt.lang)
			if tt.fails != (err != nil) || got != tt.want {
				t.Fatalf("Find(%q, %q) = %q, %v", tt.marker, tt.lang, got, err)
			}
		})
	}
}

func TestReadFindsTheRoot(t *testing.T) {
	t.Parallel()
	if got := Read(t, "go.mod"); len(got) == 0 {
		t.Fatal("go.mod is empty")
	}
}
