// Package text holds the one rule perfexp uses to fit a message into a bounded field (a
// condition's message, a status string, an error quoted from Prometheus): cut it, mark the cut,
// and never split a UTF-8 character, which the API server would refuse or show as garbage.
package text

import "unicode/utf8"

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
