package service

import "testing"

func TestWorkIsDeterministic(t *testing.T) {
	first, second := Work(10, "a"), Work(10, "a")
	if first != second {
		t.Fatal("Work gave two digests for the same input")
	}
	if first == Work(11, "a") {
		t.Fatal("Work ignored the number of rounds")
	}
}

func BenchmarkWork1000(b *testing.B) {
	for b.Loop() {
		Work(1000, "item-1")
	}
}
