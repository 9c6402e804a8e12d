/**
 * The network connector API: the `XTCPConnection` composite resource definition
 * (klutch.anynines.com/v1, claim `TCPConnection`), as Klutch specifies it. Implementations
 * are compositions of this XRD; `spec.instanceHost` and `spec.port` are always set, and
 * `spec.enhancements[]` carries optional, typed hints that implementations may use.
 */

import { CLAIM_KIND, COMPOSITE_PLURAL, CONNECTOR_GROUP, CONNECTOR_VERSION, XRD_NAME, XR_KIND } from "./names";

/** Connection types Klutch defines, each with its own fields. */
export const CONNECTION_TYPES = {
  wireguardVPN: { required: ["vpnEndpoint"], optional: ["clientIP"] },
  istioMesh: { required: ["meshID"], optional: [] },
  awsVPCPeering: { required: ["instanceVPC", "appClusterVPC"], optional: [] },
  /** Clients speak TLS with SNI, so a proxy may route several instances on one port by server name. */
  tlsSNI: { required: ["serverName"], optional: [] },
} as const;
export type ConnectionType = keyof typeof CONNECTION_TYPES;

type Schema = Record<string, unknown>;

const str = (description: string, extra: Schema = {}): Schema => ({ type: "string", description, ...extra });

function enhancementSchema(): Schema {
  const types = Object.keys(CONNECTION_TYPES);
  // Each entry is either an InstanceType or a ConnectionType hint, never both; a connection
  // type's own fields are required by CEL rules so the API server names what is missing.
  const rules = Object.entries(CONNECTION_TYPES).flatMap(([type, spec]) =>
    spec.required.map((field) => ({
      rule: `!has(self.ConnectionType) || self.ConnectionType != '${type}' || has(self.${field})`,
      message: `${field} is required for ConnectionType ${type}`,
    })),
  );
  return {
    type: "object",
    description:
      "An optional hint about the instance or the connection; implementations fall back to the core fields.",
    properties: {
      InstanceType: str("Software of the instance, e.g. PostgreSQL or RabbitMQ.", {
        minLength: 1,
        maxLength: 63,
      }),
      ConnectionType: str("How the app cluster connects.", { enum: types }),
      vpnEndpoint: str("wireguardVPN: host:port of the VPN gateway.", { minLength: 1 }),
      clientIP: str("wireguardVPN: tunnel address requested for the app cluster.", { minLength: 1 }),
      meshID: str("istioMesh: the mesh to join.", { minLength: 1 }),
      instanceVPC: str("awsVPCPeering: VPC of the instance.", { pattern: "^vpc-[0-9a-f]+$" }),
      appClusterVPC: str("awsVPCPeering: VPC of the app cluster.", { pattern: "^vpc-[0-9a-f]+$" }),
      serverName: str("tlsSNI: TLS server name clients send for this instance.", {
        minLength: 1,
        maxLength: 253,
      }),
    },
    oneOf: [{ required: ["InstanceType"] }, { required: ["ConnectionType"] }],
    "x-kubernetes-validations": rules,
  };
}

function conditionSchema(): Schema {
  return {
    type: "object",
    required: ["type", "status"],
    properties: {
      type: str("Condition type, e.g. Ready."),
      status: str("True, False or Unknown.", { enum: ["True", "False", "Unknown"] }),
      reason: str("Machine-readable reason, e.g. ConnectivityEstablished."),
      message: str("Human-readable detail."),
      lastTransitionTime: str("When the status last changed.", { format: "date-time" }),
      observedGeneration: { type: "integer", format: "int64" },
    },
  };
}

export function connectorSchema(): Schema {
  return {
    type: "object",
    properties: {
      spec: {
        type: "object",
        required: ["instanceHost", "port"],
        properties: {
          instanceHost: str("Host of the data service instance.", { minLength: 1, maxLength: 253 }),
          port: {
            type: "integer",
            minimum: 1,
            maximum: 65535,
            description: "Port of the data service instance.",
          },
          enhancements: { type: "array", items: enhancementSchema(), maxItems: 16 },
        },
      },
      status: {
        type: "object",
        properties: {
          hostForConsumer: str("Host app clusters use to reach the instance."),
          port: { type: "integer", minimum: 1, maximum: 65535, description: "Port app clusters use." },
          conditions: {
            type: "array",
            items: conditionSchema(),
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["type"],
          },
        },
      },
    },
  };
}

/** The XRD manifest. `defaultComposition` selects the implementation when a connection names none. */
export function connectorXrd(defaultComposition: string, labels: Record<string, string> = {}) {
  return {
    apiVersion: "apiextensions.crossplane.io/v1",
    kind: "CompositeResourceDefinition",
    metadata: { name: XRD_NAME, labels },
    spec: {
      group: CONNECTOR_GROUP,
      names: { kind: XR_KIND, plural: COMPOSITE_PLURAL },
      claimNames: { kind: CLAIM_KIND, plural: "tcpconnections" },
      defaultCompositionRef: { name: defaultComposition },
      versions: [
        {
          name: CONNECTOR_VERSION,
          served: true,
          referenceable: true,
          schema: { openAPIV3Schema: connectorSchema() },
          additionalPrinterColumns: [
            { name: "HOST", type: "string", jsonPath: ".status.hostForConsumer" },
            { name: "PORT", type: "integer", jsonPath: ".status.port" },
          ],
        },
      ],
    },
  };
}
