// Command benchtable writes the results of `go test -bench` into docs/benchmarks.md: the
// section between the markers <!-- bench:begin --> and <!-- bench:end --> is replaced by the
// machine the benchmarks ran on and a table of every benchmark's metrics, so `make bench`
// leaves the page current and the rest of the page (the prose that reads the numbers) alone.
//
// Usage:
//
//	benchtable -doc docs/benchmarks.md -load-before "$(cat /proc/loadavg)" bin/bench/*.txt
//
// Each argument is a file of `go test -bench` output; a file that does not exist (the
// local-cluster benchmarks, run only by `make bench-e2e`) is named as not run. The output is
// read with golang.org/x/perf/benchfmt, the parser of benchstat, so every line `go test`
// writes (configuration lines, sub-benchmarks, custom units) is read as benchstat reads it.
// It lives in its own module so that x/perf's dependencies stay out of the operator's.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
)

// The markers that delimit the generated section of the page.
const (
	beginMarker = "<!-- bench:begin -->"
	endMarker   = "<!-- bench:end -->"
)

func main() {
	doc := flag.String("doc", "docs/benchmarks.md", "Markdown page whose bench section is rewritten.")
	loadBefore := flag.String("load-before", "", "/proc/loadavg when the benchmarks started (empty: not known).")
	flag.Parse()
	if err := run(*doc, *loadBefore, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
}

func run(doc, loadBefore string, inputs []string) error {
	var results []row
	var read []source
	var missing []string
	for _, path := range inputs {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, path)
			continue
		}
		if err != nil {
			return err
		}
		rows, err := readResults(f, path)
		st, statErr := f.Stat()
		_ = f.Close()
		if err != nil {
			return err
		}
		if statErr != nil {
			return statErr
		}
		results = append(results, rows...)
		read = append(read, source{Path: path, Written: st.ModTime().UTC()})
	}
	page, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	m := readMachine()
	m.LoadBefore = firstField(loadBefore)
	m.LoadAfter = firstField(readFile("/proc/loadavg"))
	section := render(m, results, read, missing)
	out, err := replaceSection(page, section)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	return os.WriteFile(doc, out, 0o644)
}

// row is one benchmark result: where it ran and what it measured.
type row struct {
	Pkg, Name string
	Iters     int
	Metrics   []metric
}

// metric is one value in the unit the benchmark wrote it in.
type metric struct {
	Value float64
	Unit  string
}

// readResults reads every benchmark result of one file of `go test -bench` output. Lines that
// are not results (logs, PASS, ok) are skipped, as benchstat skips them.
func readResults(r io.Reader, name string) ([]row, error) {
	br := benchfmt.NewReader(r, name)
	var out []row
	for br.Scan() {
		res, ok := br.Result().(*benchfmt.Result)
		if !ok {
			continue // a syntax error or unit metadata: not a result
		}
		pkg := res.GetConfig("pkg")
		rw := row{Pkg: pkg, Name: string(res.Name.Full()), Iters: res.Iters}
		for _, v := range res.Values {
			// benchfmt tidies units (ns/op becomes sec/op); the table keeps the benchmark's own.
			if v.OrigUnit != "" {
				v.Value, v.Unit = v.OrigValue, v.OrigUnit
			}
			rw.Metrics = append(rw.Metrics, metric{Value: v.Value, Unit: v.Unit})
		}
		out = append(out, rw)
	}
	return out, br.Err()
}

// source is a file of results and when it was written: a local-cluster file may be older than
// this run, and the table says so rather than dating it with today's machine line.
type source struct {
	Path    string
	Written time.Time
}

// machine is what the numbers depend on besides the code.
type machine struct {
	CPUs                  int
	CPUModel              string
	MemoryGiB             float64
	Kernel, GoVersion     string
	Date                  time.Time
	LoadBefore, LoadAfter string
}

func readMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH, Date: time.Now().UTC()}
	m.Kernel = strings.TrimSpace(readFile("/proc/sys/kernel/osrelease"))
	for line := range strings.Lines(readFile("/proc/cpuinfo")) {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			m.CPUModel = strings.TrimSpace(v)
			break
		}
	}
	for line := range strings.Lines(readFile("/proc/meminfo")) {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err == nil {
				m.MemoryGiB = kb / (1 << 20)
			}
		}
	}
	return m
}

// readFile is the file's content, "" where it cannot be read (not Linux): the table then says
// "unknown" rather than failing a benchmark run at its very end.
func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// render is the generated section, markers included.
func render(m machine, rows []row, read []source, missing []string) string {
	var b strings.Builder
	fmt.Fprintln(&b, beginMarker)
	fmt.Fprintln(&b, "<!-- Written by `make bench` (hack/benchtable): edits between these markers are overwritten. -->")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Machine: %d CPUs (%s), %.1f GiB memory, Linux %s, %s. Written %s; load average (1 min) %s when the benchmarks started, %s when they ended.\n",
		m.CPUs, orUnknown(m.CPUModel), m.MemoryGiB, orUnknown(m.Kernel), m.GoVersion,
		m.Date.Format("2006-01-02 15:04 MST"), orUnknown(m.LoadBefore), orUnknown(m.LoadAfter))
	fmt.Fprintln(&b)
	if len(rows) == 0 {
		fmt.Fprintln(&b, "No benchmark results were found.")
	} else {
		fmt.Fprintln(&b, "| package | benchmark | runs | metric | value |")
		fmt.Fprintln(&b, "|---|---|---:|---|---:|")
		for _, r := range rows {
			for i, mt := range r.Metrics {
				pkg, name, iters := "", "", ""
				if i == 0 {
					pkg, name, iters = shortPkg(r.Pkg), r.Name, strconv.Itoa(r.Iters)
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", pkg, name, iters, mt.Unit, formatValue(mt))
			}
		}
	}
	if len(read) > 0 {
		parts := make([]string, len(read))
		for i, src := range read {
			parts[i] = fmt.Sprintf("`%s` (written %s)", filepath.Base(src.Path), src.Written.Format("2006-01-02 15:04 MST"))
		}
		fmt.Fprintf(&b, "\nRead from %s.\n", strings.Join(parts, ", "))
	}
	for _, path := range missing {
		fmt.Fprintf(&b, "\nNo `%s`: not run.\n", filepath.Base(path))
	}
	fmt.Fprint(&b, endMarker)
	return b.String()
}

// shortPkg drops the module path, which every package of the table shares.
func shortPkg(pkg string) string {
	if _, rest, ok := strings.Cut(pkg, "github.com/perfexp/perfexp/"); ok {
		return rest
	}
	return pkg
}

// formatValue writes times per op as durations and other values with up to four significant
// digits (whole numbers of 1,000 and more in full), as a person reads them.
func formatValue(mt metric) string {
	if mt.Unit == "ns/op" {
		return time.Duration(mt.Value).Round(roundTo(time.Duration(mt.Value))).String() + "/op"
	}
	v := mt.Value
	if math.Abs(v) >= 1000 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// roundTo keeps about three significant digits of a duration.
func roundTo(d time.Duration) time.Duration {
	r := time.Duration(1)
	for d >= 1000*r {
		r *= 10
	}
	return r
}

// replaceSection returns page with the text between (and including) the markers replaced by
// section. The markers must each appear once, begin before end.
func replaceSection(page []byte, section string) ([]byte, error) {
	begin := bytes.Index(page, []byte(beginMarker))
	end := bytes.Index(page, []byte(endMarker))
	switch {
	case begin < 0 || end < 0:
		return nil, fmt.Errorf("want the markers %s and %s around the generated section", beginMarker, endMarker)
	case end < begin:
		return nil, fmt.Errorf("%s comes before %s", endMarker, beginMarker)
	case bytes.Count(page, []byte(beginMarker)) > 1 || bytes.Count(page, []byte(endMarker)) > 1:
		return nil, errors.New("the bench markers appear more than once")
	}
	var out bytes.Buffer
	out.Write(page[:begin])
	out.WriteString(section)
	out.Write(page[end+len(endMarker):])
	return out.Bytes(), nil
}
