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

func TestPrintable(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain text and its newlines and tabs stay", "checkout\tp95 12 ms\nend", "checkout\tp95 12 ms\nend"},
		{"an escape sequence loses its ESC", "\x1b[2J\x1b]0;owned\x07done", "\ufffd[2J\ufffd]0;owned\ufffddone"},
		{"carriage return and NUL", "ok\rFAKE\x00", "ok\ufffdFAKE\ufffd"},
		{"C1 controls and DEL", "a\u009bb\u0085c\x7f", "a\ufffdb\ufffdc\ufffd"},
		{"a byte that is not UTF-8", "a\x9b31mb", "a\ufffd31mb"},
		{"other characters stay", "µs ✓ 日本", "µs ✓ 日本"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Printable(tt.in); got != tt.want {
				t.Fatalf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
