package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

func queued(name string, phase perfexpv1alpha1.Phase, position int32, created time.Time) perfexpv1alpha1.PerfExperiment {
	e := perfexpv1alpha1.PerfExperiment{ObjectMeta: metav1.ObjectMeta{Namespace: "perf", Name: name, CreationTimestamp: metav1.NewTime(created)}}
	e.Spec.TargetNamespace = "shop"
	e.Status.Queue, e.Status.Phase, e.Status.QueuePosition = "shop", phase, position
	e.Status.TestID = name + "-0a1b2c3d"
	return e
}

// The queue prints through cli-runtime's table printer, as kubectl get prints: upper-case
// headers, three spaces between columns, the wide columns only with -o wide, kubectl's ages.
func TestQueueTablePrinter(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	rows := []perfexpv1alpha1.PerfExperiment{
		queued("second", perfexpv1alpha1.PhaseQueued, 1, now.Add(-90*time.Second)),
		queued("running", perfexpv1alpha1.PhaseRunning, 0, now.Add(-26*time.Hour)),
	}
	rows[0].Spec.Baseline = &perfexpv1alpha1.BaselineRef{Name: "running"}
	tests := []struct {
		name  string
		table queueTable
		want  string
	}{
		{"default", queueTable{}, `QUEUE   POSITION   NAMESPACE   NAME      PHASE     PRIORITY   AGE
shop    -          perf        running   Running   0          26h
shop    1          perf        second    Queued    0          90s
`},
		{"wide", queueTable{wide: true}, `QUEUE   POSITION   NAMESPACE   NAME      PHASE     PRIORITY   AGE   TARGET   BASELINE
shop    -          perf        running   Running   0          26h   shop     -
shop    1          perf        second    Queued    0          90s   shop     running
`},
		{"no headers", queueTable{noHeaders: true}, `shop   -     perf   running   Running   0     26h
shop   1     perf   second    Queued    0     90s
`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := printQueue(&b, rows, "", now, tc.table); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}

func TestQueueCustomColumns(t *testing.T) {
	now := time.Now()
	rows := []perfexpv1alpha1.PerfExperiment{queued("second", perfexpv1alpha1.PhaseQueued, 1, now)}
	cols, err := parseCustomColumns("NAME:.metadata.name,TESTID:{.status.testID},BASELINE:.spec.baseline.name")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := printQueue(&b, rows, "", now, queueTable{columns: cols}); err != nil {
		t.Fatal(err)
	}
	want := "NAME     TESTID            BASELINE\nsecond   second-0a1b2c3d   <none>\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	for _, bad := range []string{"", "NAME", "NAME:.metadata.name,:.x", "NAME:{.metadata.name"} {
		if _, err := parseCustomColumns(bad); err == nil {
			t.Errorf("custom-columns=%s accepted", bad)
		}
	}
}

// --watch prints the table, then each row whose phase or place changed as the API server
// reports it, without a header, and an experiment that ended once more with its last phase.
// When the server ends the watch it lists again, prints what changed in between, and watches
// from the new list's resource version.
func TestWatchQueue(t *testing.T) {
	now := time.Now()
	at := func(e perfexpv1alpha1.PerfExperiment, rv string) *perfexpv1alpha1.PerfExperiment {
		e.ResourceVersion = rv
		return &e
	}
	lists := [][]perfexpv1alpha1.PerfExperiment{
		{*at(queued("first", perfexpv1alpha1.PhaseRunning, 0, now), "1"), *at(queued("second", perfexpv1alpha1.PhaseQueued, 1, now), "1")},
		{*at(queued("second", perfexpv1alpha1.PhasePreparing, 0, now), "5"), *at(queued("third", perfexpv1alpha1.PhaseQueued, 1, now), "7")},
	}
	listRVs := []string{"1", "7"}
	var mu sync.Mutex
	var listed, watchedFrom []string
	watches := make(chan *watch.FakeWatcher)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	src := queueSource{
		list: func(context.Context) ([]perfexpv1alpha1.PerfExperiment, string, error) {
			mu.Lock()
			defer mu.Unlock()
			i := min(len(listed), len(lists)-1)
			listed = append(listed, listRVs[i])
			return lists[i], listRVs[i], nil
		},
		watch: func(_ context.Context, rv string) (watch.Interface, error) {
			mu.Lock()
			watchedFrom = append(watchedFrom, rv)
			mu.Unlock()
			w := watch.NewFake()
			watches <- w
			return w, nil
		},
	}
	var b bytes.Buffer
	done := make(chan error)
	go func() { done <- watchQueue(ctx, &b, src, "", queueTable{}, func() time.Time { return now }) }()

	w := <-watches
	w.Modify(at(queued("second", perfexpv1alpha1.PhaseQueued, 1, now), "2")) // no change: not printed
	w.Modify(at(queued("second", perfexpv1alpha1.PhasePreparing, 0, now), "3"))
	w.Modify(at(queued("first", perfexpv1alpha1.PhaseSucceeded, 0, now), "4"))
	w.Stop() // the server ends the watch: list again
	<-watches
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(listed, ",") != "1,7" || strings.Join(watchedFrom, ",") != "1,7" {
		t.Errorf("listed at %v and watched from %v, want a list, a watch from its version, and again after the watch ended", listed, watchedFrom)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "QUEUE") || !strings.Contains(lines[3], "second") || !strings.Contains(lines[3], "Preparing") ||
		!strings.Contains(lines[4], "first") || !strings.Contains(lines[4], "Succeeded") ||
		!strings.Contains(lines[5], "third") || !strings.Contains(lines[5], "Queued") || strings.Count(b.String(), "QUEUE") != 1 {
		t.Errorf("want the table, then second Preparing, first Succeeded and, after the list, third Queued, one header:\n%s", b.String())
	}
}

// A watch refused because its resource version expired, and a watch that reports an error,
// both make --watch list again and watch from the new list's version, not give up.
func TestWatchQueueListsAgainWhenTheWatchFails(t *testing.T) {
	now := time.Now()
	items := []perfexpv1alpha1.PerfExperiment{queued("first", perfexpv1alpha1.PhaseRunning, 0, now)}
	var mu sync.Mutex
	var listed int
	var watchedFrom []string
	watches := make(chan *watch.FakeWatcher)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	src := queueSource{
		list: func(context.Context) ([]perfexpv1alpha1.PerfExperiment, string, error) {
			mu.Lock()
			defer mu.Unlock()
			listed++
			return items, fmt.Sprint(listed * 10), nil
		},
		watch: func(_ context.Context, rv string) (watch.Interface, error) {
			mu.Lock()
			watchedFrom = append(watchedFrom, rv)
			first := len(watchedFrom) == 1
			mu.Unlock()
			if first {
				return nil, apierrors.NewResourceExpired("too old resource version")
			}
			w := watch.NewFake()
			watches <- w
			return w, nil
		},
	}
	var b bytes.Buffer
	done := make(chan error)
	go func() { done <- watchQueue(ctx, &b, src, "", queueTable{}, func() time.Time { return now }) }()
	w := <-watches
	w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	<-watches
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if listed != 3 || strings.Join(watchedFrom, ",") != "10,20,30" {
		t.Errorf("listed %d times and watched from %v, want 3 lists and watches from 10, 20 and 30", listed, watchedFrom)
	}
	if strings.Count(b.String(), "first") != 1 {
		t.Errorf("an unchanged experiment printed again after a list:\n%s", b.String())
	}
}
