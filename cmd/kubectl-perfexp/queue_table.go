package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// columnString is the type of a table column of text.
const columnString = "string"

// queueColumns are the queue's table columns; priority 1 ones show with -o wide only, as
// kubectl's tables mark theirs.
var queueColumns = []metav1.TableColumnDefinition{
	{Name: "Queue", Type: columnString},
	{Name: "Position", Type: columnString, Description: "place in the queue; - while it holds the queue or has not joined it"},
	{Name: "Namespace", Type: columnString},
	{Name: "Name", Type: columnString, Format: "name"},
	{Name: "Phase", Type: columnString},
	{Name: "Priority", Type: "integer"},
	{Name: "Age", Type: columnString},
	{Name: "Target", Type: columnString, Priority: 1, Description: "the namespace the experiment changes"},
	{Name: "Baseline", Type: columnString, Priority: 1, Description: "the experiment it is compared with"},
}

// queueTableOf is the queue's rows as a Kubernetes Table, for cli-runtime's table printer.
func queueTableOf(rows []perfexpv1alpha1.PerfExperiment, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: queueColumns}
	for i := range rows {
		e := &rows[i]
		pos := "-"
		if e.Status.QueuePosition > 0 {
			pos = fmt.Sprint(e.Status.QueuePosition)
		}
		baseline := ""
		if e.Spec.Baseline != nil {
			baseline = e.Spec.Baseline.Name
		}
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{orDash(e.Status.Queue), pos, e.Namespace, e.Name, phaseOf(e), int64(e.Spec.Priority),
				duration.HumanDuration(now.Sub(e.CreationTimestamp.Time)), e.TargetNamespace(), orDash(baseline)},
			Object: runtime.RawExtension{Object: e},
		})
	}
	return t
}

// printQueue lists unfinished experiments as kubectl get lists objects: those holding their
// queue first, then the waiting ones by queue position.
func printQueue(out io.Writer, items []perfexpv1alpha1.PerfExperiment, queue string, now time.Time, table queueTable) error {
	return table.print(out, queueRows(items, queue), now)
}

// queueTable is how the queue's table is printed: -o wide adds what each experiment changes
// and compares with, -o custom-columns=... chooses the columns, --no-headers leaves the header
// line out, as kubectl get's flags do.
type queueTable struct {
	wide, noHeaders bool
	// columns are the custom columns; none for the queue's own.
	columns []customColumn
}

func (q queueTable) print(out io.Writer, rows []perfexpv1alpha1.PerfExperiment, now time.Time) error {
	t := queueTableOf(rows, now)
	if len(q.columns) > 0 {
		var err error
		if t, err = customTable(q.columns, rows); err != nil {
			return err
		}
	}
	return printers.NewTablePrinter(printers.PrintOptions{Wide: q.wide, NoHeaders: q.noHeaders}).PrintObj(t, out)
}

// customColumn is one column of -o custom-columns=HEADER:JSONPATH,...
type customColumn struct {
	header string
	path   *jsonpath.JSONPath
}

// customColumnsPrefix starts the -o value of custom columns, as in kubectl get.
const customColumnsPrefix = "custom-columns="

// parseCustomColumns reads kubectl's custom-columns spec: HEADER:.field.path pairs, separated
// by commas; a path may be written bare (.status.phase) or in braces ({.status.phase}).
func parseCustomColumns(spec string) ([]customColumn, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("custom-columns needs at least one HEADER:JSONPATH column, e.g. -o custom-columns=NAME:.metadata.name,PHASE:.status.phase")
	}
	var cols []customColumn
	for _, part := range strings.Split(spec, ",") {
		header, expr, ok := strings.Cut(part, ":")
		if !ok || header == "" || expr == "" {
			return nil, fmt.Errorf("custom-columns column %q is not HEADER:JSONPATH", part)
		}
		if !strings.HasPrefix(expr, "{") {
			expr = "{" + expr + "}"
		}
		jp := jsonpath.New(header).AllowMissingKeys(true)
		if err := jp.Parse(expr); err != nil {
			return nil, fmt.Errorf("custom-columns column %s: %w", header, err)
		}
		cols = append(cols, customColumn{header: header, path: jp})
	}
	return cols, nil
}

// customTable is the rows' custom columns; a field an object lacks reads <none>, as in kubectl.
func customTable(cols []customColumn, rows []perfexpv1alpha1.PerfExperiment) (*metav1.Table, error) {
	t := &metav1.Table{}
	for _, c := range cols {
		t.ColumnDefinitions = append(t.ColumnDefinitions, metav1.TableColumnDefinition{Name: c.header, Type: columnString})
	}
	for i := range rows {
		u, err := objectToUnstructured(&rows[i])
		if err != nil {
			return nil, err
		}
		obj := u.UnstructuredContent()
		cells := make([]any, 0, len(cols))
		for _, c := range cols {
			results, err := c.path.FindResults(obj)
			if err != nil {
				return nil, fmt.Errorf("custom-columns column %s: %w", c.header, err)
			}
			var vals []string
			for _, r := range results {
				for _, v := range r {
					vals = append(vals, fmt.Sprint(v.Interface()))
				}
			}
			cell := strings.Join(vals, ",")
			if cell == "" {
				cell = "<none>"
			}
			cells = append(cells, cell)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells})
	}
	return t, nil
}

// queueSource is where watchQueue reads the experiments: a list, and a watch from a list's
// resource version.
type queueSource struct {
	list  func(context.Context) (items []perfexpv1alpha1.PerfExperiment, resourceVersion string, err error)
	watch func(ctx context.Context, resourceVersion string) (watch.Interface, error)
}

// clientQueueSource lists and watches the experiments opts select through conn's client.
func clientQueueSource(conn *connection, opts []client.ListOption) (queueSource, error) {
	wc, ok := conn.client.(client.WithWatch)
	if !ok {
		return queueSource{}, errors.New("the client cannot watch")
	}
	return queueSource{
		list: func(ctx context.Context) ([]perfexpv1alpha1.PerfExperiment, string, error) {
			l := &perfexpv1alpha1.PerfExperimentList{}
			if err := wc.List(ctx, l, opts...); err != nil {
				return nil, "", unreachable(err, conn.rest)
			}
			return l.Items, l.ResourceVersion, nil
		},
		watch: func(ctx context.Context, rv string) (watch.Interface, error) {
			w, err := wc.Watch(ctx, &perfexpv1alpha1.PerfExperimentList{}, append(opts[:len(opts):len(opts)], &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})...)
			if err != nil {
				return nil, unreachable(err, conn.rest)
			}
			return w, nil
		},
	}, nil
}

// watchQueue prints the table, then, as the API server reports changes until ctx ends, the rows
// that changed (phase, position, queue), without a header, as kubectl get --watch does; an
// experiment that ended or left the queue prints once more with its last phase. When a watch
// ends (the server closes watches after a while), fails, or its resource version expired, it
// lists again and watches from there, printing what changed in between.
func watchQueue(ctx context.Context, out io.Writer, src queueSource, queue string, table queueTable, now func() time.Time) error {
	items, rv, err := src.list(ctx)
	if err != nil {
		return err
	}
	rows := queueRows(items, queue)
	if err := table.print(out, rows, now()); err != nil {
		return err
	}
	seen := map[string]string{}
	for _, e := range rows {
		seen[e.Namespace+"/"+e.Name] = rowState(&e)
	}
	table.noHeaders = true
	byKey := map[string]perfexpv1alpha1.PerfExperiment{}
	set := func(items []perfexpv1alpha1.PerfExperiment) {
		clear(byKey)
		for _, e := range items {
			byKey[e.Namespace+"/"+e.Name] = e
		}
	}
	set(items)
	show := func() error {
		items := make([]perfexpv1alpha1.PerfExperiment, 0, len(byKey))
		for _, e := range byKey {
			items = append(items, e)
		}
		// queueRows orders the rows; the ended ones print in name order.
		sort.Slice(items, func(i, j int) bool {
			return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
		})
		current := map[string]bool{}
		var changed []perfexpv1alpha1.PerfExperiment
		for _, e := range queueRows(items, queue) {
			key := e.Namespace + "/" + e.Name
			current[key] = true
			if st := rowState(&e); seen[key] != st {
				seen[key] = st
				changed = append(changed, e)
			}
		}
		for _, e := range items {
			key := e.Namespace + "/" + e.Name
			if _, was := seen[key]; was && !current[key] {
				delete(seen, key)
				changed = append(changed, e) // ended: its last phase, once
			}
		}
		if len(changed) == 0 {
			return nil
		}
		return table.print(out, changed, now())
	}
	for {
		w, err := src.watch(ctx, rv)
		switch {
		case ctx.Err() != nil:
			return nil
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			rv = "" // list again below
		case err != nil:
			return err
		default:
			rv, err = followQueue(ctx, w, rv, byKey, show)
			w.Stop()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return err
			}
		}
		if rv == "" {
			if items, rv, err = src.list(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			set(items)
			if err := show(); err != nil {
				return err
			}
		}
	}
}

// followQueue applies w's events to byKey, showing after each, until w ends or reports an
// error; it returns the resource version to watch from next, "" to list again first.
func followQueue(ctx context.Context, w watch.Interface, rv string, byKey map[string]perfexpv1alpha1.PerfExperiment, show func() error) (string, error) {
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return rv, nil
		case ev, ok = <-w.ResultChan():
		}
		if !ok || ev.Type == watch.Error {
			// Closed by the server, or an error such as an expired resource version: the
			// changes since rv may be lost, so list again.
			return "", nil
		}
		e, isExp := ev.Object.(*perfexpv1alpha1.PerfExperiment)
		if !isExp {
			continue
		}
		rv = e.ResourceVersion
		key := e.Namespace + "/" + e.Name
		switch ev.Type {
		case watch.Added, watch.Modified:
			byKey[key] = *e
		case watch.Deleted:
			delete(byKey, key)
		default: // a bookmark only moves rv on
			continue
		}
		if err := show(); err != nil {
			return rv, err
		}
	}
}

// rowState is what makes a row worth printing again.
func rowState(e *perfexpv1alpha1.PerfExperiment) string {
	return fmt.Sprintf("%s|%s|%d", e.Status.Queue, phaseOf(e), e.Status.QueuePosition)
}
