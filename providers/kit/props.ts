import type { Prop } from "./schema-model";

/** Shorthands for the catalog's property descriptions (programs/klutch-provider/catalog.ts and programs/klutch-provider/spec/). */

export const str = (
  description: string,
  extra: { secret?: boolean; plain?: boolean; enum?: readonly string[] } = {},
): Prop => ({
  type: "string",
  description,
  ...extra,
});
export const int = (description: string, plain = false): Prop => ({
  type: "integer",
  description,
  ...(plain ? { plain } : {}),
});
export const bool = (description: string, plain = false): Prop => ({
  type: "boolean",
  description,
  ...(plain ? { plain } : {}),
});
export const ref = (token: string, description: string, plain = false): Prop => ({
  ref: token,
  description,
  ...(plain ? { plain } : {}),
});
export const list = (items: Prop, description: string, plain = false): Prop => ({
  type: "array",
  items,
  description,
  ...(plain ? { plain } : {}),
});
export const map = (value: Prop, description: string, plain = false): Prop => ({
  type: "map",
  additionalProperties: value,
  description,
  ...(plain ? { plain } : {}),
});
/** The same property, marked secret (kept encrypted in state, `[secret]` in outputs). */
export const secret = (prop: Prop): Prop => ({ ...prop, secret: true });

export const KUBECONFIG = str(
  "Kubeconfig of the cluster (its text; e.g. a cluster component's `kubeconfig` output). Kept a secret.",
  { secret: true },
);

export const LABELS = map(str("value"), "Labels put on every object it makes.", true);
export const SKIP_AWAIT = bool(
  "Do not wait for workloads to become ready (local clusters without a node run no pods).",
  true,
);

/** The data services' TCP ports a routed path opens to the app side (VpcPeering, OpenstackRoutedPath). */
/** `networkConnector`'s exposure settings (network/contract/exposure.ts), as the proxy and the WireGuard gateway take them. */
export const CONNECTOR_EXPOSURE_FIELDS: Record<string, Prop> = {
  allowedSources: list(str("CIDR"), "the only sources admitted."),
  internal: bool("an internal load balancer."),
  publicEndpoint: bool("reachable from the whole internet on purpose."),
};
/** `networkConnector.dataServicePorts`, as each routed or tunnelled implementation takes it. */
export const CONNECTOR_DATA_SERVICE_PORTS = list(int("port"), "data-service ports. Default [5432].");
export const DATA_SERVICE_PORTS = list(
  int("port"),
  "TCP ports of the data services, opened to the app side's CIDRs only. Default [5432].",
  true,
);
