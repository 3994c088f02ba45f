package variant

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
)

// snapshotVersion is the format of the snapshot annotation. A future format must still read
// this one: an operator upgraded mid-experiment restores from what the old one wrote.
const snapshotVersion = 1

// Snapshot is the record of one object's baseline: every field the variant changed, with
// its value before (including "absent") and the value the variant put there. It is stored
// as JSON in the object's perfexp.dev/snapshot annotation, written in the same request as the
// change, and copied into the experiment's status.environment.touched[].snapshot.
type Snapshot struct {
	// Version is the snapshot format.
	Version int `json:"v"`
	// Experiment is the namespace/name of the experiment that patched the object, for people.
	Experiment string `json:"experiment"`
	// UID is the experiment's UID: only the experiment with this UID restores the object.
	UID types.UID `json:"uid"`
	// Changes are the changed fields in the order they were applied; they are undone in
	// reverse order, so changes that overlap (a generic patch and a workload change on the
	// same Deployment) unwind exactly.
	Changes []Change `json:"changes"`
	// KafkaMetadataState is status.kafkaMetadataState of a Strimzi Kafka before its
	// strimzi.io/kraft annotation changed; restoring waits for it again.
	KafkaMetadataState string `json:"kafkaMetadataState,omitempty"`
	// Health is how a Deployment's or StatefulSet's rollout stood before the variant.
	// Restoring waits for a finished rollout only when there was one: a workload that was
	// crash looping before the experiment will not become healthy because perfexp put it back.
	// Absent in snapshots of older perfexp versions, which are read as healthy.
	Health *Health `json:"health,omitempty"`
}

// Health is a workload's rollout before the variant.
type Health struct {
	// RolledOut is true when the rollout had finished: every replica updated, ready and
	// available.
	RolledOut bool `json:"rolledOut"`
	// ReadyReplicas is status.readyReplicas, for messages.
	ReadyReplicas int32 `json:"readyReplicas"`
	// Waiting is what the rollout waited for, when it had not finished.
	Waiting string `json:"waiting,omitempty"`
}

// wasHealthy reports whether restoring should wait for a finished rollout.
func (s *Snapshot) wasHealthy() bool {
	return s == nil || s.Health == nil || s.Health.RolledOut
}

// Change is one changed field.
type Change struct {
	// Source is the part of the variant that made the change (workloads[0], kafka.bootstrap,
	// kafka.strimziMode, patches[1]), for messages.
	Source string `json:"source"`
	// Path locates the field.
	Path Path `json:"path"`
	// Before is the field's JSON value before the change; absent when the field was absent.
	Before json.RawMessage `json:"before,omitempty"`
	// Index is, for a list element (an env var), its position before the change, so that a
	// removed element goes back where it was: env var order matters for $(VAR) references.
	Index *int `json:"index,omitempty"`
	// Keep is, for a field that was absent, how many leading elements of Path existed. Parents
	// the change created are removed again when restoring leaves them empty.
	Keep int `json:"keep,omitempty"`
	// After is the field's value once the variant was applied, as the API server stored it;
	// absent when the variant removed the field. A different value at restore time is drift.
	After json.RawMessage `json:"after,omitempty"`
}

// absent reports whether a recorded value means "the field did not exist".
func absent(v json.RawMessage) bool { return len(v) == 0 }

// encodeValue records a value read from an object.
func encodeValue(v any, found bool) (json.RawMessage, error) {
	if !found {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// decodeValue turns a recorded value back into an object value. Numbers stay json.Number so
// an integer is written back exactly as it was read.
func decodeValue(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// sameValue compares an object's current field with a recorded value, as canonical JSON
// (encoding/json sorts map keys), so formatting and number types do not matter.
func sameValue(current any, found bool, recorded json.RawMessage) bool {
	if !found || absent(recorded) {
		return !found && absent(recorded)
	}
	want, err := decodeValue(recorded)
	if err != nil {
		return false
	}
	a, err1 := json.Marshal(current)
	b, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && bytes.Equal(normalizeJSON(a), normalizeJSON(b))
}

// normalizeJSON re-encodes JSON with numbers kept as written and keys sorted.
func normalizeJSON(b []byte) []byte {
	v, err := decodeValue(b)
	if err != nil {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

// encode renders the snapshot for the annotation and the status.
func (s *Snapshot) encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeSnapshot reads a snapshot annotation.
func decodeSnapshot(s string) (*Snapshot, error) {
	var snap Snapshot
	if err := json.Unmarshal([]byte(s), &snap); err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	if snap.Version != snapshotVersion {
		return nil, fmt.Errorf("snapshot format %d is not understood (this perfexp reads format %d)", snap.Version, snapshotVersion)
	}
	return &snap, nil
}

// record captures the baseline of the fields an edit is about to change.
func record(obj map[string]any, source string, p Path) (Change, error) {
	v, found, index := get(obj, p)
	before, err := encodeValue(v, found)
	if err != nil {
		return Change{}, err
	}
	c := Change{Source: source, Path: p, Before: before}
	if found && len(p) > 0 && p[len(p)-1].Item {
		i := index
		c.Index = &i
	}
	if !found {
		c.Keep = existingPrefix(obj, p)
	}
	return c, nil
}

// fillAfter records the value each changed field has in the object the API server stored.
func fillAfter(obj map[string]any, changes []Change) error {
	for i := range changes {
		v, found, _ := get(obj, changes[i].Path)
		after, err := encodeValue(stripOurs(changes[i].Path, v), found)
		if err != nil {
			return err
		}
		changes[i].After = after
	}
	return nil
}

// absentValue stands for a field that is not there, in drift messages.
const absentValue = "absent"

// Drift is a changed field whose value is no longer the one the variant set.
type Drift struct {
	// Object names the object (Kind namespace/name).
	Object string
	// Path is the field; Source the part of the variant that set it.
	Path   Path
	Source string
	// Current is the field's value now (JSON, or "absent"); Want the value the variant set.
	Current string
	Want    string
	// Manager is the field manager that changed it, from the object's managedFields.
	Manager string
}

// drifts lists the fields of obj that no longer hold the value the variant set.
func drifts(obj map[string]any, snap *Snapshot) []Drift {
	var out []Drift
	for _, c := range snap.Changes {
		v, found, _ := get(obj, c.Path)
		v = stripOurs(c.Path, v)
		if sameValue(v, found, c.After) {
			continue
		}
		cur := absentValue
		if found {
			if b, err := json.Marshal(v); err == nil {
				cur = string(b)
			}
		}
		want := absentValue
		if !absent(c.After) {
			want = string(normalizeJSON(c.After))
		}
		out = append(out, Drift{Path: c.Path, Source: c.Source, Current: cur, Want: want})
	}
	return out
}

// unwind puts every changed field of obj back to its value before the variant, newest change
// first. Fields the variant did not change are left alone. A field that cannot be put back
// because the object's shape changed under it (someone removed the container) is skipped and
// reported: the rest is still restored, since nothing better can be done for that field.
func unwind(obj map[string]any, snap *Snapshot) (skipped []string) {
	for i := len(snap.Changes) - 1; i >= 0; i-- {
		c := snap.Changes[i]
		if absent(c.Before) {
			del(obj, c.Path)
			prune(obj, c.Path, c.Keep)
			continue
		}
		v, err := decodeValue(c.Before)
		if err == nil {
			index := -1
			if c.Index != nil {
				index = *c.Index
			}
			err = set(obj, c.Path, v, index)
		}
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s could not be put back to %s: %v", c.Path, normalizeJSON(c.Before), err))
		}
	}
	return skipped
}

// stripOurs removes perfexp's own annotations and label from a value read at a path that
// contains them (a patch that replaced metadata.annotations as a whole), so they never count
// as drift nor get restored as someone else's data.
func stripOurs(p Path, v any) any {
	if len(p) == 0 || p[0].Item || p[0].Key != "metadata" {
		return v
	}
	strip := func(m map[string]any, keys ...string) map[string]any {
		out := make(map[string]any, len(m))
		for k, val := range m {
			out[k] = val
		}
		for _, k := range keys {
			delete(out, k)
		}
		return out
	}
	switch {
	case len(p) == 1:
		md, ok := v.(map[string]any)
		if !ok {
			return v
		}
		md = strip(md)
		if a, ok := md["annotations"].(map[string]any); ok {
			md["annotations"] = strip(a, ourAnnotations...)
		}
		if l, ok := md["labels"].(map[string]any); ok {
			md["labels"] = strip(l, LabelPatchedBy)
		}
		return md
	case len(p) == 2 && p[1].Key == "annotations":
		if a, ok := v.(map[string]any); ok {
			return strip(a, ourAnnotations...)
		}
	case len(p) == 2 && p[1].Key == "labels":
		if l, ok := v.(map[string]any); ok {
			return strip(l, LabelPatchedBy)
		}
	}
	return v
}
