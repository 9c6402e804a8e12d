/**
 * A TypeScript program on the klutch provider's Node.js SDK (the npm package `@klutch/pulumi` built
 * from sdk/nodejs), run by test/e2e/provider-sdks.test.ts as an inline program of
 * Pulumi's Node.js Automation API. The test type-checks and compiles it against the packed SDK in a
 * project of its own, where `@klutch/pulumi` resolves (so the repository's tsconfig leaves it out).
 */
import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import * as klutch from "@klutch/pulumi";

/** What the test hands every language's program (test/e2e/provider-sdks.test.ts, SdkParams). */
export interface Params {
  clusterName: string;
  kubeconfigPath: string;
  namespace: string;
  postgresPort: number;
  portRange: { from: number; to: number };
  stateDir: string;
}

export function program(p: Params): () => Promise<Record<string, unknown>> {
  return async () => {
    const controlPlane = new klutch.cluster.LocalCluster("controlPlane", {
      clusterName: p.clusterName,
      kubeconfigPath: p.kubeconfigPath,
    });
    const postgres: klutch.types.input.network.TcpConnectionArgs = {
      id: "team-a/pg-1",
      instanceHost: "127.0.0.1",
      port: p.postgresPort,
      enhancements: [{ InstanceType: "PostgreSQL" }],
    };
    const proxy = new klutch.network.TcpProxy("proxy", {
      // The kubeconfig as a plain string: the SDK makes it a secret (the schema marks it so).
      kubeconfig: fs.readFileSync(p.kubeconfigPath, "utf8"),
      namespace: p.namespace,
      serviceType: "ClusterIP",
      // The local cluster runs no kubelet: apply without waiting for pods.
      skipAwait: true,
      replicas: 1,
      portRange: { from: 30000, to: 30099 },
      connections: [postgres],
    });
    const localProxy = new klutch.network.LocalTcpProxy("localProxy", {
      stateDir: p.stateDir,
      portRange: p.portRange,
      connections: [postgres],
    });
    const api = new klutch.bind.ExportedApi("postgresApi", {
      kubeconfig: controlPlane.kubeconfig,
      namespace: p.namespace,
      group: "anynines.com",
      version: "v1",
      resource: "postgresqlinstances",
      kind: "PostgresqlInstance",
      permissionClaims: [{ group: "", resource: "secrets", owner: "Provider" }],
      labels: { "klutch.io/sdk": "nodejs" },
    });
    const outputs: Record<string, pulumi.Output<unknown>> = {
      clusterName: controlPlane.clusterName,
      kubeconfig: controlPlane.kubeconfig,
      proxyService: proxy.serviceName,
      proxyAssignments: proxy.assignments,
      endpoints: localProxy.endpoints,
      unplaced: localProxy.unplaced,
      templateName: api.templateName,
    };
    return outputs;
  };
}
