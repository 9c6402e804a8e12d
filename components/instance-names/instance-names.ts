import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CorefileStubZones } from "./corefile-stub-zones";
import {
  CLAIM_RESOURCES,
  NAMES_APP,
  NAMES_NAMESPACE,
  NAMES_PORT,
  namesCorefile,
  namesPodSpec,
  type NamesServerSettings,
} from "./names-server";

export interface InstanceNamesArgs extends NamesServerSettings {
  /** Provider of the app cluster, and its kubeconfig (a secret) for the Corefile's stub zones. */
  provider: k8s.Provider;
  kubeconfig: pulumi.Input<string>;
  labels: Record<string, string>;
}

/**
 * An app cluster's instance-names server (names-server.ts) and the stub zone of the cluster's
 * own DNS that forwards the zones to it (corefile-stub-zones.ts): pods of the app cluster
 * resolve an instance's own name to its path, so a binding's Secret can keep the name and TLS
 * clients verify it. Its identity may only read the claims. Type token
 * `klutch:names:InstanceNames`.
 */
export class InstanceNames extends pulumi.ComponentResource {
  /** The ClusterIP the cluster's DNS forwards the zones to. */
  public readonly serverAddress: pulumi.Output<string>;

  constructor(name: string, args: InstanceNamesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:names:InstanceNames", name, {}, opts);
    const o = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/name": NAMES_APP };
    const meta = (n: string) => ({ name: n, namespace: NAMES_NAMESPACE, labels });

    const ns = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      { metadata: { name: NAMES_NAMESPACE, labels } },
      o,
    );
    const inNs = { ...o, dependsOn: [ns] };
    const account = new k8s.core.v1.ServiceAccount(`${name}-account`, { metadata: meta(NAMES_APP) }, inNs);
    // Reading the claims is all the watcher does with the API (programs/instance-names/main.ts).
    const role = new k8s.rbac.v1.ClusterRole(
      `${name}-reader`,
      {
        metadata: { name: `klutch-${NAMES_APP}`, labels },
        rules: CLAIM_RESOURCES.map((r) => {
          const [group, , plural] = r.split("/");
          return { apiGroups: [group!], resources: [plural!], verbs: ["get", "list", "watch"] };
        }),
      },
      o,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-reader`,
      {
        metadata: { name: `klutch-${NAMES_APP}`, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace: NAMES_NAMESPACE }],
      },
      o,
    );
    const corefile = namesCorefile(args.zones);
    const config = new k8s.core.v1.ConfigMap(
      `${name}-corefile`,
      { metadata: meta(`${NAMES_APP}-corefile`), data: { Corefile: corefile } },
      inNs,
    );
    // The names server has no `reload`: other zones roll its pods instead.
    const corefileHash = createHash("sha256").update(corefile).digest("hex").slice(0, 16);
    const selector = { "app.kubernetes.io/name": NAMES_APP };
    const deployment = new k8s.apps.v1.Deployment(
      `${name}-server`,
      {
        metadata: meta(NAMES_APP),
        spec: {
          replicas: args.replicas,
          selector: { matchLabels: selector },
          template: {
            metadata: {
              labels: { ...labels, ...selector },
              annotations: { "klutch.anynines.com/corefile-sha256": corefileHash },
            },
            spec: namesPodSpec(args, NAMES_APP, `${NAMES_APP}-corefile`),
          },
        },
      },
      { ...inNs, dependsOn: [ns, account, config] },
    );
    const service = new k8s.core.v1.Service(
      `${name}-service`,
      {
        metadata: meta(NAMES_APP),
        spec: {
          type: "ClusterIP",
          selector,
          ports: [
            { name: "dns", port: 53, protocol: "UDP", targetPort: NAMES_PORT },
            { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: NAMES_PORT },
          ],
        },
      },
      inNs,
    );
    this.serverAddress = service.spec.clusterIP;
    // After the server is Ready: the cluster's DNS forwards nothing to a server not answering yet.
    new CorefileStubZones(
      `${name}-stub-zones`,
      { kubeconfig: args.kubeconfig, zones: args.zones, serverAddress: this.serverAddress },
      { parent: this, dependsOn: [deployment, service] },
    );
    this.registerOutputs({ serverAddress: this.serverAddress });
  }
}
