// Command report-html renders the HTML reports of the fixtures in internal/report/testdata, so
// hack/report-screenshot.sh can photograph them: a single run compared with its baseline
// (run.results.json, baseline.results.json) and a sweep (sweep.results.json). With -shrink it
// instead rewrites the PNG files named as arguments with a 256-colour palette.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfexp/perfexp/internal/report"
)

func main() {
	testdata := flag.String("testdata", "internal/report/testdata", "directory holding the fixtures")
	out := flag.String("out", ".", "directory to write run.html and sweep.html to")
	shrinkPNG := flag.Bool("shrink", false, "rewrite the PNG screenshots named as arguments with a 256-colour palette")
	flag.Parse()
	if *shrinkPNG {
		for _, path := range flag.Args() {
			if err := shrink(path); err != nil {
				fmt.Fprintln(os.Stderr, "report-html:", path+":", err)
				os.Exit(1)
			}
		}
		return
	}
	if err := render(*testdata, *out); err != nil {
		fmt.Fprintln(os.Stderr, "report-html:", err)
		os.Exit(1)
	}
}

func render(testdata, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(testdata, name)) }
	b, err := read("run.results.json")
	if err != nil {
		return err
	}
	run, err := report.ParseJSON(b)
	if err != nil {
		return err
	}
	if b, err = read("baseline.results.json"); err != nil {
		return err
	}
	base, err := report.ParseJSON(b)
	if err != nil {
		return err
	}
	page, err := report.HTML(run, report.HTMLOptions{Baseline: base})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "run.html"), []byte(page), 0o644); err != nil {
		return err
	}
	if b, err = read("sweep.results.json"); err != nil {
		return err
	}
	sw, err := report.ParseSweepJSON(b)
	if err != nil {
		return err
	}
	if page, err = report.SweepHTML(sw); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "sweep.html"), []byte(page), 0o644)
}
