package report

import (
	"encoding/xml"
	"fmt"
	"strings"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
	"github.com/perfexp/perfexp/internal/result"
)

// JUnit test suites as CI systems read them (Jenkins, GitLab, GitHub Actions reporters): one
// suite per experiment, one test case per objective, k6 threshold and primary comparison row,
// and one for the verdict itself.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Time      string      `xml:"time,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnit renders the results as a JUnit XML report. A missed objective, a crossed threshold, a
// Regressed primary metric and a Fail or Invalid verdict are failures; an objective or a
// comparison that could not be judged (Unknown, Inconclusive) is skipped, with the reason.
func JUnit(r *result.Result) ([]byte, error) {
	ref := r.Namespace + "/" + r.Experiment
	s := junitSuite{Name: ref, Time: fmt.Sprintf("%.3f", r.Window.MeasuredSeconds)}
	if !r.Window.Start.IsZero() {
		s.Timestamp = r.Window.Start.UTC().Format("2006-01-02T15:04:05")
	}
	add := func(c junitCase) {
		c.Time = "0"
		s.Cases = append(s.Cases, c)
	}

	verdict := junitCase{Name: "verdict", Classname: "perfexp." + r.Experiment,
		SystemOut: fmt.Sprintf("verdict %s, validity %s", orDash(string(r.Verdict)), orDash(string(r.Validity)))}
	if r.Verdict == perfexpv1alpha1.VerdictFail || r.Verdict == perfexpv1alpha1.VerdictInvalid {
		why := append(append([]string{}, r.VerdictReasons...), r.InvalidReasons...)
		verdict.Failure = &junitMessage{Message: "verdict " + string(r.Verdict), Type: string(r.Verdict), Text: strings.Join(why, "\n")}
	}
	add(verdict)

	for _, o := range r.Objectives {
		c := junitCase{Name: o.Name, Classname: "perfexp." + r.Experiment + ".objectives", SystemOut: o.Message}
		switch o.Outcome {
		case perfexpv1alpha1.ObjectiveMissed:
			c.Failure = &junitMessage{Message: "objective missed: " + o.Message, Type: string(o.Outcome)}
		case perfexpv1alpha1.ObjectiveUnknown:
			c.Skipped = &junitMessage{Message: "could not be judged: " + o.Message}
		}
		add(c)
	}

	for _, t := range r.Thresholds {
		c := junitCase{Name: t.Name(), Classname: "perfexp." + r.Experiment + ".thresholds"}
		if t.Crossed {
			c.Failure = &junitMessage{Message: "k6 threshold crossed in scenario " + strings.Join(t.Scenarios, ", "), Type: "ThresholdCrossed"}
		}
		add(c)
	}

	if r.Comparison != nil {
		for _, m := range r.Comparison.Metrics {
			if !m.Primary {
				continue
			}
			c := junitCase{Name: m.Metric, Classname: "perfexp." + r.Experiment + ".comparison",
				SystemOut: fmt.Sprintf("%s against %s: %s", m.Change, r.Comparison.Baseline, changeCell(m))}
			switch m.Change {
			case perfexpv1alpha1.ChangeRegressed:
				c.Failure = &junitMessage{Message: fmt.Sprintf("Regressed against %s: %s", r.Comparison.Baseline, changeCell(m)), Type: string(m.Change)}
			case perfexpv1alpha1.ChangeInconclusive, perfexpv1alpha1.ChangeUnknown:
				c.Skipped = &junitMessage{Message: fmt.Sprintf("%s: %s", m.Change, m.Why)}
			}
			add(c)
		}
	}

	for _, c := range s.Cases {
		s.Tests++
		if c.Failure != nil {
			s.Failures++
		}
		if c.Skipped != nil {
			s.Skipped++
		}
	}
	doc := junitSuites{Name: "perfexp", Tests: s.Tests, Failures: s.Failures, Skipped: s.Skipped, Suites: []junitSuite{s}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}
