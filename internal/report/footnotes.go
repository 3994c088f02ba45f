package report

import (
	"regexp"
	"strconv"
	"strings"
)

// footnotes number the reasons of a table's rows so that each is stated once, under the table,
// however many rows it applies to: a table of 30 metrics where 12 read "Inconclusive (the 95%
// interval ... straddles ±5%)" says it once. A reason's numbers that the row already shows (its
// interval in the Change column, its adjusted p) are left out of the note, so rows that differ
// only in them share one. results.json keeps every row's full reason.
type footnotes struct {
	order []string
	index map[string]int
}

var (
	// noteInterval is an interval written into a reason: " [-9.9, -4.7]%".
	noteInterval = regexp.MustCompile(`\s*\[[-+0-9.,\s]+\]\s*%?`)
	// noteAdjusted is an adjusted p or q written into a reason: " (adjusted p 0.031)".
	noteAdjusted = regexp.MustCompile(`\s*\((?:adjusted p|q) [-+0-9.e]+\)`)
)

// noteText is the reason as its footnote states it.
func noteText(why string) string {
	s := noteInterval.ReplaceAllString(why, "")
	s = noteAdjusted.ReplaceAllString(s, "")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// mark returns the superscript number of why's footnote, adding the footnote when new.
func (f *footnotes) mark(why string) string {
	text := noteText(why)
	if f.index == nil {
		f.index = map[string]int{}
	}
	n, ok := f.index[text]
	if !ok {
		f.order = append(f.order, text)
		n = len(f.order)
		f.index[text] = n
	}
	return superscript(n)
}

// write prints the footnotes, one line each, after a table.
func (f *footnotes) write(m *markdown) {
	for i, text := range f.order {
		sep := "  \n"
		if i == len(f.order)-1 {
			sep = "\n\n"
		}
		m.printf("%s %s.%s", superscript(i+1), cell(text), sep)
	}
}

// superscript writes n in superscript digits.
func superscript(n int) string {
	sup := []rune("⁰¹²³⁴⁵⁶⁷⁸⁹")
	var b strings.Builder
	for _, c := range strconv.Itoa(n) {
		b.WriteRune(sup[c-'0'])
	}
	return b.String()
}
