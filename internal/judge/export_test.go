package judge

import (
	"math/rand/v2"

	"github.com/perfexp/perfexp/internal/result"
)

// The simulated runs, for the external tests that play other packages' decisions over them.

// SimCell is one cell of the simulation tables: how a simulated environment's runs vary.
type SimCell = simCell

// NewSimCell is a cell with the given between-run sd and within-run AR(1) coefficient.
func NewSimCell(name string, sd, phi float64) SimCell { return simCell{name: name, sd: sd, phi: phi} }

// BlockSD is the cell's between-block sd.
func (c simCell) BlockSD() float64 { return c.blockSD }

// Level draws one run's level (log scale).
func (c simCell) Level(rng *rand.Rand) float64 { return c.level(rng) }

// Sim is the run simulation of the cell.
func (c simCell) Sim() simConfig { return c.sim() }

// Run simulates one run at the given ratio to the baseline's level.
func (c simConfig) Run(rng *rand.Rand, id string, ratio float64) *result.Result {
	return c.run(rng, id, ratio)
}
