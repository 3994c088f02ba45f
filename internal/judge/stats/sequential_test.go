package stats

import "testing"

func TestStoppingLooks(t *testing.T) {
	st := Stopping{First: 2, Max: 10}
	var spent float64
	for n := 2; n <= 10; n++ {
		spent += st.LookAt(n).Spent()
	}
	if l := st.LookAt(2); l.K != 1 || l.Max != 9 {
		t.Errorf("first look %+v", l)
	}
	if spent > alpha+1e-12 || spent < alpha-1e-12 {
		t.Errorf("the looks spend %.4f, want %.2f", spent, alpha)
	}
}
