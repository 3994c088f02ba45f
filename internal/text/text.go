// Package text holds the one rule perfexp uses to fit a message into a bounded field (a
// condition's message, a status string, an error quoted from Prometheus): cut it, mark the cut,
// and never split a UTF-8 character, which the API server would refuse or show as garbage.
package text

import (
	"strings"
	"unicode/utf8"
)

// ellipsis marks a cut message.
const ellipsis = "..."

// Truncate returns s when it fits in n bytes, else its longest prefix that ends on a character
// boundary and leaves room for "...", followed by "...". With n too small for the mark it
// returns the longest whole-character prefix of at most n bytes.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len(ellipsis)+1 {
		return prefix(s, max(n, 0))
	}
	return prefix(s, n-len(ellipsis)) + ellipsis
}

// prefix is the longest prefix of s of at most n bytes that does not end inside a character.
func prefix(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Printable returns s without the control characters a terminal acts on: C0 (but newline and
// tab), DEL and C1, each replaced by U+FFFD, as are bytes that are not UTF-8 (a lone 0x9b is
// the 8-bit CSI to some terminals). Pod logs reach conditions, events and `kubectl perfexp
// watch` through messages; an escape sequence written by a script could otherwise clear a
// reader's screen, retitle their window or forge the lines around it.
func Printable(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if isControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f)
}
