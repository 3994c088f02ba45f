package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"
)

// output is a verb's -o flag: the verb's own formats (its human ones, first the default) and
// kubectl's printers from cli-runtime (json, yaml, name, jsonpath=..., go-template=..., with
// --template, --allow-missing-template-keys and --show-managed-fields), so -o reads and
// behaves as it does in kubectl get.
type output struct {
	own   []string
	print *genericclioptions.PrintFlags
}

// addOutput registers -o on cmd. def is the default format ("" for a verb whose human output
// has no name); own are the verb's own formats, which win over a printer of the same name.
func addOutput(cmd *cobra.Command, def string, own ...string) *output {
	o := &output{own: own, print: genericclioptions.NewPrintFlags("").WithDefaultOutput(def)}
	o.print.JSONYamlPrintFlags.AddFlags(cmd)
	o.print.TemplatePrinterFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(o.print.OutputFormat, "output", "o", def, "output format: "+strings.Join(o.formats(), ", "))
	o.print.OutputFlagSpecified = func() bool { return cmd.Flag("output").Changed }
	_ = cmd.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return o.formats(), cobra.ShellCompDirectiveNoFileComp
	})
	return o
}

// formats are the -o values the verb takes, as help and completion list them.
func (o *output) formats() []string {
	out := slices.Clone(o.own)
	for _, f := range o.print.AllowedFormats() {
		if strings.HasSuffix(f, "-file") || f == "templatefile" || f == "template" {
			continue // accepted, but not worth listing: kubectl's aliases of the ones below
		}
		if f == "jsonpath" || f == "go-template" || f == "jsonpath-as-json" {
			f += "="
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// format is the -o value given, or the default.
func (o *output) format() string { return *o.print.OutputFormat }

// human says whether the verb prints its own output: one of its formats, or none given (and no
// --template, which alone means go-template, as in kubectl).
func (o *output) human() bool {
	if t := o.print.TemplatePrinterFlags.TemplateArgument; t != nil && *t != "" && !o.print.OutputFlagSpecified() {
		return false
	}
	f := o.format()
	return f == "" || slices.Contains(o.own, f)
}

// validate refuses an unknown -o value before anything is read from the cluster.
func (o *output) validate() error {
	if o.human() {
		return nil
	}
	if _, err := o.print.ToPrinter(); err != nil {
		if genericclioptions.IsNoCompatiblePrinterError(err) {
			return fmt.Errorf("unknown output %q: use %s", o.format(), strings.Join(o.formats(), ", "))
		}
		return err
	}
	return nil
}

// printObject prints a Kubernetes object, or a list of them, with the printer -o chose: a
// list prints as kubectl get prints one (kind List), each item with its apiVersion and kind.
func (o *output) printObject(out io.Writer, obj runtime.Object) error {
	p, err := o.print.ToPrinter()
	if err != nil {
		return err
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return err
	}
	return p.PrintObj(u, out)
}

// printDocument prints a JSON document that is not a Kubernetes object (a report's results,
// the versions): yaml as kubectl's YAML printer writes it, jsonpath and go-template through
// cli-runtime's printers; -o name has nothing to name.
func (o *output) printDocument(out io.Writer, doc []byte) error {
	switch o.format() {
	case "json":
		var b bytes.Buffer
		if err := json.Indent(&b, doc, "", "    "); err != nil {
			return err
		}
		_, err := fmt.Fprintln(out, b.String())
		return err
	case "yaml":
		y, err := yaml.JSONToYAML(doc)
		if err != nil {
			return err
		}
		_, err = out.Write(y)
		return err
	case "name", "kyaml":
		return fmt.Errorf("-o %s prints Kubernetes objects; this output is not one: use json, yaml, jsonpath= or go-template=", o.format())
	}
	p, err := o.print.ToPrinter()
	if err != nil {
		return err
	}
	return p.PrintObj(document(doc), out)
}

// document is a JSON document handed to the template printers, which read objects through
// encoding/json.
type document json.RawMessage

func (d document) MarshalJSON() ([]byte, error)     { return d, nil }
func (d document) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (d document) DeepCopyObject() runtime.Object   { return slices.Clone(d) }

// toUnstructured turns a typed object into the map the printers read, with the apiVersion and
// kind the typed client leaves out; a typed list becomes a List of such items.
func toUnstructured(obj runtime.Object) (runtime.Object, error) {
	if meta.IsListType(obj) {
		items, err := meta.ExtractList(obj)
		if err != nil {
			return nil, err
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List",
			"metadata": map[string]any{"resourceVersion": ""}}}
		for _, item := range items {
			u, err := objectToUnstructured(item)
			if err != nil {
				return nil, err
			}
			list.Items = append(list.Items, *u)
		}
		return list, nil
	}
	return objectToUnstructured(obj)
}

func objectToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	if u.GetKind() == "" {
		kinds, _, err := scheme().ObjectKinds(obj)
		if err != nil {
			return nil, err
		}
		u.SetGroupVersionKind(kinds[0])
	}
	return u, nil
}
