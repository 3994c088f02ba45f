package sweep

import (
	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// Progress is how far a sweep's runs have come.
type Progress struct {
	// Total runs planned; Created of them exist; Done have ended; Failed ended Failed or Aborted.
	Total, Created, Done, Failed int
	// CurrentArm and CurrentExperiment name the run that holds the environment, if any.
	CurrentArm, CurrentExperiment string
	// Arms counts runs per arm, the baseline first.
	Arms []perfexpv1alpha1.SweepArmStatus
}

// AllEnded reports whether every planned run exists and has ended.
func (p Progress) AllEnded() bool { return p.Total > 0 && p.Done == p.Total }

// holdsEnvironment reports whether a run in this phase has the environment patched or is
// putting it back, i.e. is the one the queue lets run.
func holdsEnvironment(ph perfexpv1alpha1.Phase) bool {
	switch ph {
	case perfexpv1alpha1.PhasePreparing, perfexpv1alpha1.PhaseSettingUp, perfexpv1alpha1.PhaseWarmingUp,
		perfexpv1alpha1.PhaseRunning, perfexpv1alpha1.PhaseRestoring:
		return true
	}
	return false
}

// Summarize counts the runs by outcome. runs maps a run's name to its experiment; a run not
// (yet) created is absent.
func Summarize(p *Plan, runs map[string]*perfexpv1alpha1.PerfExperiment) Progress {
	out := Progress{Total: len(p.Runs)}
	index := map[string]int{}
	for _, a := range p.Arms {
		index[a.Name] = len(out.Arms)
		out.Arms = append(out.Arms, perfexpv1alpha1.SweepArmStatus{Name: a.Name, Parameter: a.Parameter, Value: a.Value})
	}
	for _, r := range p.Runs {
		arm := &out.Arms[index[r.Arm]]
		arm.Runs++
		exp, ok := runs[r.Name]
		if !ok {
			continue
		}
		out.Created++
		ph := exp.Status.Phase
		switch {
		case ph == perfexpv1alpha1.PhaseSucceeded:
			out.Done++
			arm.Succeeded++
		case ph.IsTerminal():
			out.Done++
			out.Failed++
			arm.Failed++
		case holdsEnvironment(ph):
			out.CurrentArm, out.CurrentExperiment = r.Arm, r.Name
		}
	}
	return out
}
