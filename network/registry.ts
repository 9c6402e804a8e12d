import { z } from "zod";
import type { NetworkPathObject } from "../lib/bridge/api";
import { awsVpcPeering } from "./aws-vpc-peering/model/spec";
import type { ImplementationSpec, Realisation } from "./contract/implementation";
import { noop } from "./noop/model/spec";
import { openstack } from "./openstack/model/spec";
import { proxy } from "./proxy/model/spec";
import { wireguard } from "./wireguard/model/spec";

/**
 * The network implementations, once, each its folder's spec (network/<impl>/model/spec.ts): a
 * new one is its folder and a line here (test/e2e/plugin-seam.test.ts adds one that way). The
 * config schema, validation, the environment, the compositions, the bridge and the network
 * preview all read this list; network/plugins/ calls each spec's Pulumi side. The first is the
 * default.
 */
export const IMPLEMENTATIONS = [proxy, wireguard, awsVpcPeering, openstack, noop] as const;

export type ImplementationName = (typeof IMPLEMENTATIONS)[number]["name"];
export const IMPLEMENTATION_NAMES: readonly ImplementationName[] = IMPLEMENTATIONS.map((i) => i.name);
export const DEFAULT_IMPLEMENTATION: ImplementationName = IMPLEMENTATIONS[0].name;

type Implementations = typeof IMPLEMENTATIONS;
/** The schemas' tuple type, element by element (a mapped type over a type parameter keeps the tuple). */
type SchemasOf<T extends readonly unknown[]> = {
  -readonly [K in keyof T]: T[K] extends ImplementationSpec<string, infer S> ? S : never;
};
type Schemas = SchemasOf<Implementations>;

/** An app cluster's `networkConnector`: one of the implementations' schemas, by `implementation`. */
export const networkConnector = z.discriminatedUnion(
  "implementation",
  IMPLEMENTATIONS.map((i) => i.schema) as unknown as Schemas,
);

export function implementationSpec(name: string): ImplementationSpec | undefined {
  return IMPLEMENTATIONS.find((i) => i.name === name);
}

export function isImplementationName(name: string): name is ImplementationName {
  return implementationSpec(name) !== undefined;
}

/** How the bridge realises an implementation's paths, or undefined for one it does not know. */
export function realisationOf(name: string): Realisation | undefined {
  return implementationSpec(name)?.realisation;
}

/** Whether the bridge reconciles a path at all (NOOP markers are left alone: no finalizer, no status). */
export function isManaged(p: Pick<NetworkPathObject, "spec">): boolean {
  return realisationOf(p.spec.implementation) !== "ignored";
}

/** Error for a path whose implementation no bridge realises. */
export function unsupportedImplementation(name: string): string {
  const known = IMPLEMENTATIONS.filter((i) => i.realisation !== "ignored").map((i) => i.name);
  return `implementation "${name}" is not realised by this bridge; it realises ${known.join(", ")} (noop needs no bridge)`;
}
