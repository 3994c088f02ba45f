package load

import "regexp"

// redacted replaces a secret in a log line copied into an experiment's status.
const redacted = "[redacted]"

// secretPatterns find what a pod's log may print that must not reach an experiment's status,
// where anyone who may read the experiment would read it: service-account tokens and other
// JWTs, Authorization headers and bearer tokens, private keys, passwords in URLs, and the
// values of variables or fields whose names say they hold a secret (DB_PASSWORD=...,
// "api_token": "..."). Each keeps what it found the secret by, so the log still reads.
var secretPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`), redacted},
	{regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`), redacted},
	{regexp.MustCompile(`(?i)(authorization"?\s*[:=]\s*"?)[^\r\n"]+`), "${1}" + redacted},
	{regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/=-]{8,}`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[a-z0-9_.-]*)("?\s*[=:]\s*"?)[^\s"',;}&]+`), "${1}${2}" + redacted},
	{regexp.MustCompile(`(://[^/\s:@]+:)[^/\s@]+@`), "${1}" + redacted + "@"},
}

// Redact removes secrets from log text before it is copied into a status message.
func Redact(text string) string {
	for _, p := range secretPatterns {
		text = p.re.ReplaceAllString(text, p.with)
	}
	return text
}
