package service

import "testing"

func TestWorkIsDeterministic(t *testing.T) {
	if Work(10, "a") != Work(10, "a") {
		t.Fatal("Work gave two digests for the same input")
	}
	if Work(10, "a") == Work(11, "a") {
		t.Fatal("Work ignored the number of rounds")
	}
}

func BenchmarkWork1000(b *testing.B) {
	for b.Loop() {
		Work(1000, "item-1")
	}
}
