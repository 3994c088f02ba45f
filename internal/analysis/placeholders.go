package analysis

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Placeholders are the names a custom query may write as {{.Name}}, in the order the docs list
// them. api/v1alpha1's QueryPattern refuses any other {{ at admission; RenderQuery refuses it
// again, for objects admitted before that rule existed.
var Placeholders = []string{"Namespace", "TestID", "Start", "End", "WarmUpEnd", "Window"}

// MaxQueryLength is the longest query RenderQuery expands, the CRD's MaxLength of a query.
const MaxQueryLength = 4096

// maxPlaceholderValue bounds the length of one placeholder's value: a namespace or a test id
// (label values the operator derives from object names, at most 253 bytes), an RFC 3339 time
// or a PromQL duration.
const maxPlaceholderValue = 253

// minPlaceholder is the shortest placeholder as written, "{{.End}}".
const minPlaceholder = len("{{.End}}")

// MaxRenderedLength bounds RenderQuery's output: the query's text plus, for each placeholder
// (at most MaxQueryLength/minPlaceholder of them), a value of at most maxPlaceholderValue
// bytes. About 130 KB: the expansion is linear in the query and nothing in it repeats.
const MaxRenderedLength = MaxQueryLength + MaxQueryLength/minPlaceholder*maxPlaceholderValue

// RenderQuery puts data's values in place of the placeholders {{.Namespace}}, {{.TestID}},
// {{.Start}}, {{.End}}, {{.WarmUpEnd}} and {{.Window}} (spaces inside the braces are allowed:
// {{ .Window }}). It is plain substitution, one left-to-right pass over the query with no
// template engine: nothing a user writes can loop, call a function or read another field, and
// the output is at most MaxRenderedLength bytes. Any other {{...}} is an error that names it.
func RenderQuery(query string, data TemplateData) (string, error) {
	if len(query) > MaxQueryLength {
		return "", fmt.Errorf("bad template: the query has %d bytes; at most %d are read", len(query), MaxQueryLength)
	}
	values := map[string]string{
		"Namespace": data.Namespace, "TestID": data.TestID, "Start": data.Start,
		"End": data.End, "WarmUpEnd": data.WarmUpEnd, "Window": data.Window,
	}
	var b strings.Builder
	b.Grow(len(query))
	rest := query
	for {
		open := strings.Index(rest, "{{")
		if open < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:open])
		rest = rest[open:]
		end := strings.Index(rest[2:], "}}")
		if end < 0 {
			return "", fmt.Errorf("bad template: %s opens {{ and never closes it; %s", clip(rest, 40), allowedPlaceholders())
		}
		action := rest[:2+end+2]
		name, ok := placeholderName(rest[2 : 2+end])
		if !ok {
			return "", fmt.Errorf("bad template: %s is not a placeholder; %s", clip(action, 60), allowedPlaceholders())
		}
		v := values[name]
		if len(v) > maxPlaceholderValue {
			return "", fmt.Errorf("bad template: the value of {{.%s}} has %d bytes, over %d", name, len(v), maxPlaceholderValue)
		}
		b.WriteString(v)
		rest = rest[len(action):]
	}
	return b.String(), nil
}

// placeholderName is the placeholder inside one pair of braces, "  .Window " -> "Window": ASCII
// white space (what RE2's [[:space:]] matches), a dot and one of Placeholders.
func placeholderName(inner string) (string, bool) {
	name, ok := strings.CutPrefix(strings.Trim(inner, " \t\n\v\f\r"), ".")
	if !ok {
		return "", false
	}
	for _, p := range Placeholders {
		if name == p {
			return name, true
		}
	}
	return "", false
}

func allowedPlaceholders() string {
	ps := make([]string, len(Placeholders))
	for i, p := range Placeholders {
		ps[i] = "{{." + p + "}}"
	}
	return "a query may use only " + strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1]
}

// clip shortens s to at most n bytes without cutting a UTF-8 character in half.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
