import { version } from "../../package.json";
import type { ComponentSpec, ObjectType, PackageSpec, Prop } from "../../providers/kit/schema-model";
import { KUBECONFIG, bool, int, list, map, ref, str } from "../../providers/kit/props";
import { bindComponents, bindTypes } from "./spec/bind";
import { crossplaneComponents, crossplaneTypes } from "./spec/crossplane";
import { environmentComponents, environmentTypes } from "./spec/environment";
import { IMPLEMENTATIONS } from "../../network/registry";
import { PUBLICATION } from "../../lib/release/publication";

/**
 * The components the `klutch` provider serves, described once: schema.json is generated from
 * this (programs/klutch-provider/generate-schema.ts) and the provider checks its inputs against it
 * (programs/klutch-provider/provider.ts). The construct side (programs/klutch-provider/constructors.ts) maps each to the
 * TypeScript component of the same token.
 */

const types: Record<string, ObjectType> = {
  "klutch:network:PortRange": {
    description: "Inclusive range of ports the proxy hands out.",
    properties: { from: int("First port."), to: int("Last port.") },
    required: ["from", "to"],
  },
  "klutch:network:Exposure": {
    description:
      "Who may reach a NodePort or LoadBalancer Service in front of the data-service network (a proxy, a WireGuard gateway).",
    properties: {
      sourceRanges: list(str("CIDR"), "Source CIDRs admitted; 0.0.0.0/0 only with public: true."),
      internal: bool("Ask the cloud for an internal (private) load balancer."),
      public: bool("Open to the internet on purpose."),
    },
    required: ["sourceRanges", "internal", "public"],
  },
  "klutch:network:ConsumerEndpoint": {
    description: "Where a consumer dials a connection (its XTCPConnection status).",
    properties: { hostForConsumer: str("Host consumers dial."), port: int("Port consumers dial.") },
    required: ["hostForConsumer", "port"],
  },
  "klutch:bind:PermissionClaim": {
    description: "Objects that travel with a bound API (an APIServiceExportTemplate permissionClaim).",
    properties: {
      group: str('API group ("" for the core group).'),
      resource: str("Plural resource, e.g. secrets."),
      version: str("API version; default v1."),
      owner: str("Whose objects are synced.", { enum: ["Provider", "Consumer"] }),
    },
    required: ["group", "resource"],
  },
};

const clusterOutputs: Record<string, Prop> = {
  clusterName: str("The cluster's name."),
  kubeconfig: str("The cluster's kubeconfig (files it references inlined). A secret.", { secret: true }),
};

const components: ComponentSpec[] = [
  {
    token: "klutch:cluster:LocalCluster",
    description:
      "A cluster run on this machine by `npm run clusters -- up`, adopted through its kubeconfig file (starting and stopping it is the command's job).",
    inputs: {
      clusterName: str("The cluster's name.", { plain: true }),
      kubeconfigPath: str(
        "The kubeconfig file `npm run clusters -- up` wrote (`.klutch/local/<cluster>/kubeconfig`).",
        {
          plain: true,
        },
      ),
    },
    requiredInputs: ["clusterName", "kubeconfigPath"],
    outputs: clusterOutputs,
    requiredOutputs: ["clusterName", "kubeconfig"],
  },
  {
    token: "klutch:cluster:ExistingCluster",
    description: "A cluster someone else runs, reached through a kubeconfig file.",
    inputs: {
      clusterName: str("The cluster's name.", { plain: true }),
      kubeconfigPath: str("Path of the cluster's kubeconfig file.", { plain: true }),
      context: str("Context in that file; its current-context when omitted."),
    },
    requiredInputs: ["clusterName", "kubeconfigPath"],
    outputs: clusterOutputs,
    requiredOutputs: ["clusterName", "kubeconfig"],
  },
  {
    token: "klutch:bind:ExportedApi",
    description:
      "One data-service API offered for binding: an APIServiceExportTemplate on the control plane selecting the API's resource and the objects that travel with it.",
    inputs: {
      kubeconfig: KUBECONFIG,
      namespace: str("Where the backend looks for templates (Klutch uses crossplane-system)."),
      group: str("API group, e.g. anynines.com.", { plain: true }),
      version: str("API version, e.g. v1.", { plain: true }),
      resource: str("Plural lowercase resource, e.g. postgresqlinstances.", { plain: true }),
      kind: str("Kind, e.g. PostgresqlInstance.", { plain: true }),
      permissionClaims: list(
        ref("klutch:bind:PermissionClaim", "claim"),
        "Objects that travel with the API.",
        true,
      ),
      labels: { ...map(str("value"), "Labels of the template."), plain: true },
    },
    requiredInputs: ["kubeconfig", "namespace", "group", "version", "resource"],
    outputs: { templateName: str("The APIServiceExportTemplate's name.") },
    requiredOutputs: ["templateName"],
  },
];

/** What each registered implementation serves (its spec's `pulumi.provider`), in registry order. */
const surfaces = IMPLEMENTATIONS.flatMap((i) => {
  const surface = i.pulumi.provider?.();
  return surface ? [surface] : [];
});
const surfaceTypes: Record<string, ObjectType> = Object.assign({}, ...surfaces.map((s) => s.types)) as Record<
  string,
  ObjectType
>;

export const KLUTCH_PACKAGE: PackageSpec = {
  name: "klutch",
  // One version for the whole release: package.json's (programs/release/release.ts).
  version,
  description:
    "Klutch (Crossplane + klutch-bind multi-cluster data services) components: the whole environment, clusters, Crossplane, the bind backend, OIDC, exported APIs, app cluster bindings and the network paths (TCP proxy, WireGuard, AWS VPC peering, OpenStack routing).",
  publication: PUBLICATION,
  types: {
    ...types,
    ...surfaceTypes,
    ...bindTypes,
    ...crossplaneTypes,
    ...environmentTypes,
  },
  components: [
    ...components,
    ...surfaces.flatMap((s) => s.components),
    ...bindComponents,
    ...crossplaneComponents,
    ...environmentComponents,
  ],
};
