import {
  NETWORK_PATH_CRD_NAME,
  NETWORK_PATH_GROUP,
  NETWORK_PATH_KIND,
  NETWORK_PATH_PLURAL,
  NETWORK_PATH_VERSION,
} from "./names";
import { connectorSchema } from "./xrd";

/**
 * NetworkPath: what a Pulumi-backed composition composes for each XTCPConnection. The bridge
 * reconciles it by running that implementation's Pulumi program and writes the result into
 * its status, from where the composition copies it into the XTCPConnection.
 */
export function networkPathCrd(labels: Record<string, string> = {}) {
  type ObjectSchema = { properties: Record<string, unknown> } & Record<string, unknown>;
  const connector = connectorSchema() as { properties: { spec: ObjectSchema; status: ObjectSchema } };
  const spec = {
    ...connector.properties.spec,
    required: ["implementation", "connection", "instanceHost", "port"],
    properties: {
      ...connector.properties.spec.properties,
      implementation: {
        type: "string",
        minLength: 1,
        description: "Network connector implementation, e.g. proxy.",
      },
      connection: {
        type: "string",
        minLength: 1,
        description: "Name of the XTCPConnection this path realises.",
      },
      consumerNamespace: {
        type: "string",
        description: "Namespace of the TCPConnection claim, when the connection was claimed.",
      },
    },
  };
  const status = {
    ...connector.properties.status,
    properties: {
      ...connector.properties.status.properties,
      observedGeneration: { type: "integer", format: "int64" },
    },
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1" as const,
    kind: "CustomResourceDefinition" as const,
    metadata: { name: NETWORK_PATH_CRD_NAME, labels },
    spec: {
      group: NETWORK_PATH_GROUP,
      // Crossplane 1.x records composed resources by name only, so what a composition
      // composes must be cluster-scoped; the consumer's namespace is a spec field instead.
      scope: "Cluster",
      names: {
        kind: NETWORK_PATH_KIND,
        plural: NETWORK_PATH_PLURAL,
        singular: "networkpath",
        listKind: "NetworkPathList",
      },
      versions: [
        {
          name: NETWORK_PATH_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: "object", properties: { spec, status } } },
          additionalPrinterColumns: [
            { name: "IMPLEMENTATION", type: "string", jsonPath: ".spec.implementation" },
            { name: "HOST", type: "string", jsonPath: ".status.hostForConsumer" },
            { name: "PORT", type: "integer", jsonPath: ".status.port" },
            { name: "READY", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          ],
        },
      ],
    },
  };
}

/** The label the Crossplane chart's ClusterRole aggregates (templates/clusterrole.yaml, 1.20). */
export const AGGREGATE_TO_CROSSPLANE = "rbac.crossplane.io/aggregate-to-crossplane";

/**
 * What Crossplane core needs to compose NetworkPaths: the composite reconciler gets, creates,
 * patches and deletes the resources it composes and watches them through its cache (list,
 * watch). Crossplane's RBAC manager grants core such rights only for the CRDs of providers it
 * installed (internal/controller/rbac/provider/roles of crossplane 1.20); for a CRD of our own
 * the chart's `crossplane` ClusterRole aggregates every ClusterRole with this label. Without it,
 * Crossplane as a pod logs "networkpaths.klutch.anynines.com is forbidden" and never composes
 * (a local Crossplane process with an admin kubeconfig hid it).
 */
export function crossplaneNetworkPathRole(labels: Record<string, string> = {}) {
  return {
    metadata: {
      name: "klutch:crossplane:networkpaths",
      labels: { ...labels, [AGGREGATE_TO_CROSSPLANE]: "true" },
    },
    rules: [
      {
        apiGroups: [NETWORK_PATH_GROUP],
        resources: [NETWORK_PATH_PLURAL],
        verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
      },
    ],
  };
}
