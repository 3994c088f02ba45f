package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	perfexpv1alpha1 "github.com/perfexp/perfexp/api/v1alpha1"
)

// version is the plugin's release, set by plugins/release.sh with
// -ldflags "-X main.version=vX.Y.Z"; a go install shows its module version instead.
var version = ""

func clientVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

func versionCommand(connect clientFactory, flags *kubeFlags) *cobra.Command {
	var clientOnly bool
	var o *output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and the perfexp operator's image in the cluster",
		Example: `  # Both the plugin's and the operator's version
  kubectl perfexp version

  # The plugin's only, without asking the cluster
  kubectl perfexp version --client

  # For a script
  kubectl perfexp version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			v := versions{Client: clientInfo{Version: clientVersion(), GoVersion: runtime.Version(), API: perfexpv1alpha1.GroupVersion.String()}}
			if o.human() {
				if _, err := fmt.Fprintf(out, "Client Version: %s (%s, API %s)\n", v.Client.Version, v.Client.GoVersion, v.Client.API); err != nil {
					return err
				}
			}
			if clientOnly {
				return v.print(out, o)
			}
			conn, err := connect(flags)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			server, err := operatorImage(ctx, conn.client)
			if err != nil {
				return unreachable(err, conn.rest)
			}
			v.Server = server
			if !o.human() {
				return v.print(out, o)
			}
			_, err = fmt.Fprintf(out, "Server Version: %s\n", server)
			return err
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print the plugin's version only")
	o = addOutput(cmd, "")
	return cmd
}

// versions is what version -o json|yaml prints, in kubectl version's shape.
type versions struct {
	Client clientInfo `json:"clientVersion"`
	// Server is the operator's image and where it runs, or why it is unknown.
	Server string `json:"serverVersion,omitempty"`
}

type clientInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	API       string `json:"api"`
}

// print writes v with the printer -o chose; the human lines are printed as they are learnt.
func (v versions) print(out io.Writer, o *output) error {
	if o.human() {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return o.printDocument(out, b)
}

// operatorImage is the image of the perfexp operator's Deployment, with where it runs; a user
// who may not list Deployments is told so rather than failed.
func operatorImage(ctx context.Context, c client.Client) (string, error) {
	list := &appsv1.DeploymentList{}
	if err := c.List(ctx, list, client.MatchingLabels{operatorLabel: "perfexp"}); err != nil {
		if isForbidden(err) {
			return "unknown (you may not list Deployments to find the operator)", nil
		}
		return "", err
	}
	for _, d := range list.Items {
		for _, ctr := range d.Spec.Template.Spec.Containers {
			if ctr.Name == "manager" || len(d.Spec.Template.Spec.Containers) == 1 {
				return fmt.Sprintf("%s (Deployment %s/%s)", ctr.Image, d.Namespace, d.Name), nil
			}
		}
	}
	return "none (no Deployment labelled " + operatorLabel + "=perfexp)", nil
}
