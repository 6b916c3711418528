package main

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

func TestRecreateSeconds(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name        string
		objs        []recreation
		wantSeconds []float64
		wantMissing []string
	}{
		{"from the delete call's return",
			[]recreation{{name: "a", deleted: at(0), gone: at(20), back: at(300)}},
			[]float64{0.3}, nil},
		{"from the watch seeing it go, when the deleter ran late",
			[]recreation{{name: "a", deleted: at(500), gone: at(100), back: at(400)}},
			[]float64{0.3}, nil},
		{"the watch missed the deletion",
			[]recreation{{name: "a", deleted: at(0), back: at(250)}},
			[]float64{0.25}, nil},
		{"not back, or not deleted: missing, sorted",
			[]recreation{
				{name: "c", deleted: at(0), gone: at(10)},
				{name: "b", deleted: at(0), back: at(100)},
				{name: "a"},
			},
			[]float64{0.1}, []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seconds, missing := recreateSeconds(tt.objs)
			if !slices.Equal(seconds, tt.wantSeconds) || !slices.Equal(missing, tt.wantMissing) {
				t.Errorf("recreateSeconds() = %v, %v, want %v, %v", seconds, missing, tt.wantSeconds, tt.wantMissing)
			}
		})
	}
}

func TestUntilRecreated(t *testing.T) {
	cm := func(name string, uid types.UID) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}
	}
	tests := []struct {
		name     string
		events   []watch.Event
		wantGone []bool
		wantBack []bool
	}{
		{"gone and back with a new UID",
			[]watch.Event{
				{Type: watch.Deleted, Object: cm("a", "1")},
				{Type: watch.Added, Object: cm("a", "2")},
			},
			[]bool{true}, []bool{true}},
		{"others' objects and the object's own changes are not a re-creation",
			[]watch.Event{
				{Type: watch.Added, Object: cm("other", "9")},
				{Type: watch.Modified, Object: cm("a", "1")},
				{Type: watch.Deleted, Object: cm("a", "1")},
			},
			[]bool{true}, []bool{false}},
		{"the deletion of a re-created object is not its going",
			[]watch.Event{
				{Type: watch.Added, Object: cm("a", "2")},
				{Type: watch.Deleted, Object: cm("a", "2")},
			},
			[]bool{false}, []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := watch.NewFakeWithChanSize(len(tt.events), false)
			for _, ev := range tt.events {
				w.Action(ev.Type, ev.Object)
			}
			objs := []recreation{{name: "a", uid: "1"}}
			if err := untilRecreated(context.Background(), w, objs, 50*time.Millisecond); err != nil {
				t.Fatalf("untilRecreated() = %v", err)
			}
			for i, r := range objs {
				if !r.gone.IsZero() != tt.wantGone[i] || !r.back.IsZero() != tt.wantBack[i] {
					t.Errorf("%s: gone %v, back %v; want gone %t, back %t", r.name, r.gone, r.back, tt.wantGone[i], tt.wantBack[i])
				}
			}
		})
	}
}

func TestUntilRecreatedWatchEnds(t *testing.T) {
	w := watch.NewFake()
	w.Stop()
	if err := untilRecreated(context.Background(), w, []recreation{{name: "a", uid: "1"}}, time.Minute); err == nil {
		t.Error("untilRecreated() of an ended watch = nil, want an error")
	}
}
