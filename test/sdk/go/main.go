// A Go program on the klutch provider's Go SDK (sdk/go), run by
// test/e2e/provider-sdks.test.ts through the Go Automation API's inline program: the program
// runs in this process, which hosts its language runtime itself (no pulumi-language-go), and the
// engine (the toolchain's `pulumi` on PATH) starts the klutch plugin named in the work dir's
// Pulumi.yaml for every component.
//
//	sdk-consumer up <params.json>       create or update, then print {"outputs", "changes"} as JSON
//	sdk-consumer destroy <params.json>  destroy and remove the stack
//
// The backend, passphrase and PULUMI_HOME come from the environment. Secret outputs are printed
// as {"secret": true} without their value.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/anynines/klutch-pulumi/sdk/go/klutch/bind"
	"github.com/anynines/klutch-pulumi/sdk/go/klutch/cluster"
	"github.com/anynines/klutch-pulumi/sdk/go/klutch/network"
	"github.com/pulumi/pulumi/sdk/v3/go/auto"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optdestroy"
	"github.com/pulumi/pulumi/sdk/v3/go/auto/optup"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// params are what the test hands every language's program (test/e2e/provider-sdks.test.ts, SdkParams).
type params struct {
	StackName      string `json:"stackName"`
	WorkDir        string `json:"workDir"`
	ClusterName    string `json:"clusterName"`
	KubeconfigPath string `json:"kubeconfigPath"`
	Namespace      string `json:"namespace"`
	PostgresPort   int    `json:"postgresPort"`
	PortRange      struct {
		From int `json:"from"`
		To   int `json:"to"`
	} `json:"portRange"`
	StateDir string `json:"stateDir"`
}

func program(p params) pulumi.RunFunc {
	return func(ctx *pulumi.Context) error {
		controlPlane, err := cluster.NewLocalCluster(ctx, "controlPlane", &cluster.LocalClusterArgs{
			ClusterName:    p.ClusterName,
			KubeconfigPath: p.KubeconfigPath,
		})
		if err != nil {
			return err
		}
		// The kubeconfig as a plain string: the SDK makes it a secret (the schema marks it so).
		kubeconfig, err := os.ReadFile(p.KubeconfigPath)
		if err != nil {
			return err
		}
		postgres := network.TcpConnectionArgs{
			Id:           pulumi.String("team-a/pg-1"),
			InstanceHost: pulumi.String("127.0.0.1"),
			Port:         pulumi.Int(p.PostgresPort),
			Enhancements: pulumi.StringMapArray{pulumi.StringMap{"InstanceType": pulumi.String("PostgreSQL")}},
		}
		serviceType, skipAwait := "ClusterIP", true
		proxy, err := network.NewTcpProxy(ctx, "proxy", &network.TcpProxyArgs{
			Kubeconfig:  pulumi.String(string(kubeconfig)),
			Namespace:   pulumi.String(p.Namespace),
			ServiceType: &serviceType,
			// The local cluster runs no kubelet: apply without waiting for pods.
			SkipAwait:   &skipAwait,
			Replicas:    pulumi.Int(1),
			PortRange:   network.PortRangeArgs{From: pulumi.Int(30000), To: pulumi.Int(30099)},
			Connections: network.TcpConnectionArray{postgres},
		})
		if err != nil {
			return err
		}
		localProxy, err := network.NewLocalTcpProxy(ctx, "localProxy", &network.LocalTcpProxyArgs{
			StateDir:    p.StateDir,
			PortRange:   network.PortRangeArgs{From: pulumi.Int(p.PortRange.From), To: pulumi.Int(p.PortRange.To)},
			Connections: []network.TcpConnectionInput{postgres},
		})
		if err != nil {
			return err
		}
		kind, owner := "PostgresqlInstance", "Provider"
		api, err := bind.NewExportedApi(ctx, "postgresApi", &bind.ExportedApiArgs{
			Kubeconfig: controlPlane.Kubeconfig,
			Namespace:  pulumi.String(p.Namespace),
			Group:      "anynines.com",
			Version:    "v1",
			Resource:   "postgresqlinstances",
			Kind:       &kind,
			PermissionClaims: []bind.PermissionClaimInput{bind.PermissionClaimArgs{
				Group:    pulumi.String(""),
				Resource: pulumi.String("secrets"),
				Owner:    pulumi.StringPtr(owner),
			}},
			Labels: map[string]pulumi.StringInput{"klutch.io/sdk": pulumi.String("go")},
		})
		if err != nil {
			return err
		}
		ctx.Export("clusterName", controlPlane.ClusterName)
		ctx.Export("kubeconfig", controlPlane.Kubeconfig)
		ctx.Export("proxyService", proxy.ServiceName)
		ctx.Export("proxyAssignments", proxy.Assignments)
		ctx.Export("endpoints", localProxy.Endpoints)
		ctx.Export("unplaced", localProxy.Unplaced)
		ctx.Export("templateName", api.TemplateName)
		return nil
	}
}

type shownOutput struct {
	Secret bool `json:"secret"`
	Value  any  `json:"value,omitempty"`
}

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "up" && os.Args[1] != "destroy") {
		fmt.Fprintln(os.Stderr, "usage: sdk-consumer up|destroy <params.json>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintf(os.Stderr, "sdk-consumer %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func run(command, paramsFile string) error {
	data, err := os.ReadFile(paramsFile)
	if err != nil {
		return err
	}
	var p params
	if err := json.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%s: %w", paramsFile, err)
	}
	ctx := context.Background()
	// The project (its name, runtime and the klutch plugin's path) is the work dir's Pulumi.yaml.
	stack, err := auto.UpsertStackInlineSource(ctx, p.StackName, "", program(p), auto.WorkDir(p.WorkDir))
	if err != nil {
		return err
	}
	if command == "destroy" {
		if _, err := stack.Destroy(ctx, optdestroy.ProgressStreams(os.Stderr)); err != nil {
			return err
		}
		return stack.Workspace().RemoveStack(ctx, p.StackName)
	}
	// The diff display shows every resource's inputs: the test reads it for secrets in plain text.
	res, err := stack.Up(ctx, optup.Diff(), optup.ProgressStreams(os.Stderr))
	if err != nil {
		return err
	}
	outputs := map[string]shownOutput{}
	for name, o := range res.Outputs {
		if o.Secret {
			outputs[name] = shownOutput{Secret: true}
		} else {
			outputs[name] = shownOutput{Value: o.Value}
		}
	}
	changes := map[string]int{}
	if res.Summary.ResourceChanges != nil {
		changes = *res.Summary.ResourceChanges
	}
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"outputs": outputs, "changes": changes})
}
