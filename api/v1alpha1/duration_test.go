package v1alpha1_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/perfexp/perfexp/internal/testenv"
)

// durationSyntax is the CRD pattern of every duration field: what it accepts is what Go's
// time.ParseDuration reads, except for values too large for an int64 of nanoseconds.
const durationSyntax = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`

// parseableDuration is the guard each duration's CEL rule checks before calling duration().
// Each unit gets at most as many digits as keep one component under about 280000h, and at most
// six components are allowed, so the sum stays under Go's limit of about 2562047h. A value
// that fails the guard is refused with the rule's own message instead of a CEL evaluation error,
// and a stored value that passes it can always be decoded by the manager.
const parseableDuration = `^(([0-9]{1,5}([.][0-9]+)?h)|([0-9]{1,7}([.][0-9]+)?m)|([0-9]{1,9}([.][0-9]+)?s)|([0-9]{1,12}([.][0-9]+)?ms)|([0-9]{1,15}([.][0-9]+)?(us|µs))|([0-9]{1,18}([.][0-9]+)?ns)){1,6}$`

func TestParseableDurationGuaranteesGoCanParse(t *testing.T) {
	guard := regexp.MustCompile(parseableDuration)
	syntax := regexp.MustCompile(durationSyntax)

	// The largest values the guard lets through, and the values seen wedging the manager.
	tests := []struct {
		in    string
		match bool
	}{
		{"99999h", true},
		{"99999.999999h9999999.99m999999999.9s999999999999ms999999999999999us999999999999999999ns", true},
		{"99999h99999h99999h99999h99999h99999h", true},
		{"1h30m", true},
		{"0s", true},
		{"9999999h", false},
		{"2562048h", false},
		{"99999h99999h99999h99999h99999h99999h99999h", false},
		{"9999999999999999999ns", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := guard.MatchString(tt.in); got != tt.match {
				t.Fatalf("guard matches %q: %v, want %v", tt.in, got, tt.match)
			}
			if _, err := time.ParseDuration(tt.in); tt.match && err != nil {
				t.Fatalf("the guard accepts %q but Go cannot parse it: %v", tt.in, err)
			}
		})
	}

	// Random values the guard accepts, built from its own grammar, must all parse.
	units := []struct {
		unit   string
		digits int
	}{{"h", 5}, {"m", 7}, {"s", 9}, {"ms", 12}, {"us", 15}, {"µs", 15}, {"ns", 18}}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			u := units[rng.IntN(len(units))]
			n := 1 + rng.IntN(u.digits)
			for i := range n {
				if i == 0 || rng.IntN(4) > 0 {
					b.WriteByte('9')
				} else {
					b.WriteByte(byte('0' + rng.IntN(10)))
				}
			}
			if rng.IntN(3) == 0 {
				b.WriteString(".999999999")
			}
			b.WriteString(u.unit)
		}
		s := b.String()
		if !guard.MatchString(s) || !syntax.MatchString(s) {
			t.Fatalf("generator produced %q, which the guard or the syntax refuses", s)
		}
		if _, err := time.ParseDuration(s); err != nil {
			t.Fatalf("the guard accepts %q but Go cannot parse it: %v", s, err)
		}
	}
}

// TestEveryDurationFieldIsBounded reads the generated CRD and checks that every field with the
// duration syntax carries the parseable guard and an upper bound, so a new duration field
// cannot be added without them.
func TestEveryDurationFieldIsBounded(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "crd", "bases", "perfexp.dev_perfexperiments.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	guard := "self.matches('" + parseableDuration + "')"
	bound := regexp.MustCompile(`duration\(self\) <= duration\('[0-9]+[hm]'\)`)
	found := 0
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if s["pattern"] == durationSyntax {
			found++
			if n, ok := s["maxLength"].(float64); !ok || n > 32 {
				t.Errorf("%s: a duration needs maxLength 32 to bound its rule's cost", path)
			}
			ok := false
			rules, _ := s["x-kubernetes-validations"].([]any)
			for _, r := range rules {
				rule, _ := r.(map[string]any)["rule"].(string)
				if strings.HasPrefix(rule, guard+" && ") && bound.MatchString(rule) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s: no rule of the form %s && ... && duration(self) <= duration('<bound>')", path, guard)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			walk(path+"."+name, p.(map[string]any))
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
		if extra, ok := s["additionalProperties"].(map[string]any); ok {
			walk(path+"{}", extra)
		}
	}
	for _, v := range crd.Spec.Versions {
		walk(v.Name, v.Schema.OpenAPIV3Schema)
	}
	// warm-up, scenario, start delay, stage, time unit, arrival-rate duration, five timeouts and
	// three slice offsets.
	if found < 14 {
		t.Fatalf("found %d duration fields in the CRD, want at least 14", found)
	}
}
