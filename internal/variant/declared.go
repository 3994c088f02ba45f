package variant

import (
	"slices"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// fieldReplicas is the inventory's field of spec.replicas.
const fieldReplicas = "replicas"

// DeclaredFields are the inventory fields (see perfexpv1alpha1.WorkloadInventory.Declared) the
// variant changed on one touched object, from its snapshot: "replicas", "image/C",
// "env/C/VAR", "env/C", "resources/C/limits.cpu", "resources/C", "container/C", "nodes", and "*"
// for a change to the pod template the inventory cannot place (the whole template, the
// containers list). Fields outside the inventory (annotations, a Kafka resource's spec) give
// nothing. A snapshot that cannot be read gives "*": every difference of the object is then
// taken as the variant's, which hides a confound rather than invents one.
func DeclaredFields(t perfexpv1alpha1.TouchedObject) []string {
	if t.Snapshot == "" {
		return nil
	}
	snap, err := decodeSnapshot(t.Snapshot)
	if err != nil {
		return []string{"*"}
	}
	var out []string
	for _, c := range snap.Changes {
		if f := declaredField(c.Path); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// declaredField is the inventory field a changed path lies in, "" when none.
func declaredField(p Path) string {
	keys := func(n int) []string {
		var ks []string
		for _, e := range p[:min(n, len(p))] {
			if e.Item {
				ks = append(ks, "["+e.Name+"]")
			} else {
				ks = append(ks, e.Key)
			}
		}
		return ks
	}
	if p.hasPrefix(replicasPath) {
		return fieldReplicas
	}
	if len(p) < 2 || !slices.Equal(keys(2), []string{"spec", "template"}) {
		return ""
	}
	if len(p) < 4 || p[2].Key != "spec" {
		if len(p) >= 3 && p[2].Key == "metadata" {
			return "" // the template's labels and annotations are not in the inventory
		}
		return "*"
	}
	switch p[3].Key {
	case "nodeSelector", "affinity", "tolerations", "nodeName", "topologySpreadConstraints":
		return "nodes"
	case "containers":
	default:
		return ""
	}
	if len(p) < 5 || !p[4].Item {
		return "*"
	}
	c := p[4].Name
	if len(p) < 6 {
		return "container/" + c
	}
	switch p[5].Key {
	case "image":
		return "image/" + c
	case "env":
		if len(p) >= 7 && p[6].Item {
			return "env/" + c + "/" + p[6].Name
		}
		return "env/" + c
	case "resources":
		if len(p) >= 8 {
			return "resources/" + c + "/" + p[6].Key + "." + p[7].Key
		}
		return "resources/" + c
	}
	return ""
}
