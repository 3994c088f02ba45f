package load

import (
	"fmt"
	"strings"
	"testing"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// frame cuts a summary into SummaryFrame lines as the entry script does.
func frame(run, doc string, size int) []string {
	n := (len(doc) + size - 1) / size
	var lines []string
	for i := 0; i < n; i++ {
		lines = append(lines, fmt.Sprintf("%s %s %d %d %s", SummaryFrame, run, i, n, doc[i*size:min(len(doc), (i+1)*size)]))
	}
	return lines
}

func TestExtractSummaryFramed(t *testing.T) {
	doc := `{"metrics":{"iterations":{"count":42,"rate":1.5},"http_reqs":{"count":84,"rate":3}}}`
	lines := frame("r1", doc, 20)
	// What a script's handleSummary prints to stdout: a text summary that ends without a newline,
	// its own JSON (with metrics, and a line that is exactly "{").
	text := "\n  █ TOTAL RESULTS\n\n    iterations...: 7\n{\n\"metrics\": {\"iterations\": {\"count\": 7}}\n}"
	tests := []struct {
		name string
		log  string
		want float64
	}{
		{name: "after the script's text", log: text + "\n" + strings.Join(lines, "\n") + "\n", want: 42},
		{name: "before the script's text", log: strings.Join(lines, "\n") + "\n" + text, want: 42},
		{name: "console lines between the chunks", log: lines[0] + "\ntime=x level=info msg=\"{\" source=console\n" + strings.Join(lines[1:], "\n") + "\n" + text, want: 42},
		{name: "chunks out of order", log: strings.Join([]string{lines[2], lines[0], lines[4], lines[1], lines[3]}, "\n"), want: 42},
		{name: "glued to the end of a line without a newline", log: "no newline" + strings.Join(lines, "\nmore"), want: 42},
		{name: "an incomplete run is passed over for the complete one", log: strings.Join(lines, "\n") + "\n" + frame("r2", doc, 20)[0], want: 42},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractSummary([]byte(tt.log))
			if err != nil {
				t.Fatal(err)
			}
			s, err := parseSummary(got)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := s.Metrics["iterations"].Value("count"); n != tt.want {
				t.Fatalf("iterations = %v, want %v (summary %s)", n, tt.want, got)
			}
		})
	}
	if tail := LogTail([]byte("a\n"+strings.Join(lines, "\n")+"\nb\n"), 10, 1000); tail != "a\nb" {
		t.Fatalf("LogTail kept the summary's frame: %q", tail)
	}
}

func TestRecordK6Scenarios(t *testing.T) {
	summary := []byte(`{"metrics":{"http_reqs":{"count":9},"http_reqs{scenario:news}":{"count":5},` +
		`"iterations{scenario:news}":{"count":5},"http_req_failed{scenario:contacts}":{"passes":1},` +
		`"http_reqs{scenario:contacts}":{"count":4},"http_req_duration{scenario:news}":{"avg":3}}}`)
	s, err := parseSummary(summary)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Scenarios()
	if got["news"] != (ScenarioCounts{Requests: 5, Iterations: 5}) || got["contacts"] != (ScenarioCounts{Requests: 4, Failed: 1}) || len(got) != 2 {
		t.Fatalf("Scenarios() = %+v", got)
	}
	st := &perfexpv1alpha1.ScenarioStatus{K6Scenarios: []string{"news"}}
	recordK6Scenarios(st, summary)
	recordK6Scenarios(st, nil)
	if strings.Join(st.K6Scenarios, ",") != "contacts,news" {
		t.Fatalf("k6Scenarios = %v, want contacts,news once each", st.K6Scenarios)
	}
}
