package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"fits", "abc", 3, "abc"},
		{"exactly", "exactly10!", 10, "exactly10!"},
		{"a bit too long", "a bit too long", 10, "a bit t..."},
		{"€ is 3 bytes from index 2: cut before it, not inside", "ab€def", 6, "ab..."},
		{"ASCII cut", "abcdefgh", 6, "abc..."},
		{"a two-byte character at the cut stays whole", "ab€cdef", 6, "ab..."},
		{"three-byte characters", strings.Repeat("€", 4), 10, "€€..."},
		{"too small for the mark", "€uro", 2, ""},
		{"too small, ASCII", "abcdef", 3, "abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.s, tc.n)
			if got != tc.want || len(got) > max(tc.n, 0) && len(tc.s) > tc.n || !utf8.ValidString(got) {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}
