package report

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// notes number the reasons a report's rows give, so that each is stated once, in "How this was
// decided", however many rows it applies to. A reason is cut into its clauses (what comes before
// its first ": ", then each "; " part after it), and the clauses the same rows give are stated
// together as one note. Thirty rows Inconclusive because their interval straddles ±δ under the
// same between-run noise share one note; a clause that differs between them ("about 3 runs per
// side would decide it") is a note of its own, and a row carries the numbers of both. A reason's
// numbers that the row already shows (its interval in the Change column, its adjusted p) are left
// out of the note, so rows that differ only in them share one. results.json keeps every row's
// full reason.
type notes struct {
	rows []noteRow
	// Filled by number, on first use.
	numbered bool
	texts    []string
	marks    map[int][]int
}

// noteRow is what one row of a table says about its verdict: reasons to be cut into clauses,
// and whole clauses that are never cut (a noise source that holds ": " of its own).
type noteRow struct {
	id             int
	reasons, whole []string
}

// clause is one part of a reason, and what joined it to the next part.
type clause struct{ text, sep string }

var (
	// noteInterval is an interval written into a reason: " [-9.9, -4.7]%".
	noteInterval = regexp.MustCompile(`\s*\[[-+0-9.,\s]+\]\s*%?`)
	// noteAdjusted is an adjusted p or q written into a reason: " (adjusted p 0.031)".
	noteAdjusted = regexp.MustCompile(`\s*\((?:adjusted p|q) [-+0-9.e]+\)`)
)

// noteText is the reason as its note states it.
func noteText(why string) string {
	s := noteInterval.ReplaceAllString(why, "")
	s = noteAdjusted.ReplaceAllString(s, "")
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

// add records the reasons of the row id; rows are added in the order a reader meets them, which
// is the order their notes are numbered in.
func (n *notes) add(id int, reasons, whole []string) {
	if len(reasons) == 0 && len(whole) == 0 {
		return
	}
	n.rows = append(n.rows, noteRow{id: id, reasons: reasons, whole: whole})
	n.numbered = false
}

// number groups the rows' clauses by the rows that give them and numbers the groups by their
// first appearance.
func (n *notes) number() {
	if n.numbered {
		return
	}
	n.numbered = true
	rowsOf := map[string][]int{}
	first := map[string]clause{}
	var order []string
	for i, row := range n.rows {
		var cs []clause
		for _, why := range row.reasons {
			cs = append(cs, clauses(noteText(why))...)
		}
		for _, w := range row.whole {
			cs = append(cs, clause{text: strings.TrimSuffix(strings.TrimSpace(w), ".")})
		}
		for _, c := range cs {
			if c.text == "" {
				continue
			}
			if _, seen := first[c.text]; !seen {
				first[c.text] = c
				order = append(order, c.text)
			}
			if rs := rowsOf[c.text]; len(rs) == 0 || rs[len(rs)-1] != i {
				rowsOf[c.text] = append(rs, i)
			}
		}
	}
	groupOf := map[string]int{}
	var groups [][]clause
	n.marks = map[int][]int{}
	for _, text := range order {
		sig := fmt.Sprint(rowsOf[text])
		g, ok := groupOf[sig]
		if !ok {
			g = len(groups)
			groupOf[sig] = g
			groups = append(groups, nil)
			for _, i := range rowsOf[text] {
				n.marks[n.rows[i].id] = append(n.marks[n.rows[i].id], g+1)
			}
		}
		groups[g] = append(groups[g], first[text])
	}
	n.texts = n.texts[:0]
	for _, g := range groups {
		var b strings.Builder
		for j, c := range g {
			b.WriteString(c.text)
			if j < len(g)-1 {
				sep := c.sep
				if sep == "" {
					sep = "; "
				}
				b.WriteString(sep)
			}
		}
		n.texts = append(n.texts, b.String())
	}
	for id := range n.marks {
		slices.Sort(n.marks[id])
	}
}

// mark is the superscript numbers of the row id's notes, after a space; "" for a row without.
func (n *notes) mark(id int) string {
	if n == nil {
		return ""
	}
	n.number()
	var b strings.Builder
	for _, k := range n.marks[id] {
		b.WriteString(" " + superscript(k))
	}
	return b.String()
}

// empty is true when no row gave a reason.
func (n *notes) empty() bool { return n == nil || len(n.rows) == 0 }

// write prints the notes, one line each.
func (n *notes) write(m *markdown) {
	if n.empty() {
		return
	}
	n.number()
	for i, text := range n.texts {
		sep := "  \n"
		if i == len(n.texts)-1 {
			sep = "\n\n"
		}
		m.printf("%s %s.%s", superscript(i+1), cell(text), sep)
	}
}

// clauses cuts a reason at its first ": " and the "; " after it, outside brackets: "the 95%
// interval straddles ±5%: too noisy (20 and 20 intervals); more or longer runs narrow it" is
// three clauses.
func clauses(s string) []clause {
	var out []clause
	depth, start, headDone := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ':', ';':
			if depth != 0 || i+1 >= len(s) || s[i+1] != ' ' || (s[i] == ':' && headDone) {
				continue
			}
			headDone = true
			out = append(out, clause{text: strings.TrimSpace(s[start:i]), sep: s[i : i+2]})
			start = i + 2
			i++
		}
	}
	return append(out, clause{text: strings.TrimSpace(s[start:])})
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
