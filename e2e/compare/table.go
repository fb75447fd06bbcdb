package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// table is one table of the summary: a title, a header and rows of cells.
// The terminal gets it as aligned text and the generated files as
// Markdown, from the same cells, so the two cannot disagree.
type table struct {
	title  string
	header []string
	rows   [][]string
}

// writeText prints the table as the terminal shows it: its title after
// "== ", then columns aligned by spaces.
func (t table) writeText(w io.Writer) {
	fmt.Fprintln(w, "== "+t.title)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, r := range append([][]string{t.header}, t.rows...) {
		fmt.Fprint(tw, strings.Join(r, "\t")+"\t\n")
	}
	tw.Flush()
}

// writeMarkdown prints the table as a Markdown heading of the given
// level and a pipe table.
func (t table) writeMarkdown(w io.Writer, level int) {
	fmt.Fprintf(w, "%s %s\n\n", strings.Repeat("#", level), t.title)
	markdownRows(w, t.header, t.rows)
	fmt.Fprintln(w)
}

// markdownRows prints a pipe table.
func markdownRows(w io.Writer, header []string, rows [][]string) {
	line := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintln(w, "| "+strings.Join(esc, " | ")+" |")
	}
	line(header)
	rule := make([]string, len(header))
	for i := range rule {
		rule[i] = "---"
	}
	line(rule)
	for _, r := range rows {
		line(r)
	}
}
