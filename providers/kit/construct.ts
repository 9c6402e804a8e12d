import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { dataServicePorts } from "../../lib/config/fields";
import { kubeconfigProvider } from "./kubeconfig-provider";
import { errorMap, zodIssues } from "../../lib/config/messages";
import { isKnown } from "./schema-model";

/* eslint-disable @typescript-eslint/no-explicit-any */
// Inputs arrive as the engine sends them, checked against programs/klutch-provider/catalog.ts first
// (provider.ts), so their shapes are the schema's; `any` is the boundary.
export type Args = Record<string, any>;

export interface Constructed {
  resource: pulumi.ComponentResource;
  /** The component's outputs, by the schema's output names. */
  outputs: Record<string, pulumi.Input<unknown>>;
}

/**
 * Makes one component from schema-shaped inputs: `args` as the component takes them (plain
 * inputs as values, the others as they came, secrets as secret Outputs), `values` the same
 * resolved (UNKNOWN where not known yet) for checks that must happen before anything is
 * registered. A constructor that must ask a server first (the Environment: its control plane's
 * API server) returns a promise.
 */
export type Constructor = (
  name: string,
  args: Args,
  opts: pulumi.ComponentResourceOptions,
  values: Args,
) => Constructed | Promise<Constructed>;

/** Throws the one-message error for problems the project's own checks found. */
export function refuse(component: string, name: string, problems: string[]): void {
  if (problems.length > 0)
    throw new Error(`${component} ${name}: invalid arguments:\n  - ${problems.join("\n  - ")}`);
}

/**
 * The config model's zod schema run on a value built from the inputs: its problems as
 * `field: message`, with the config path turned into the input's name by `rename` (the config
 * model's `klutch:bind.tls.issuer` is the input `tlsIssuer`).
 */
export function zodProblems<T extends z.ZodTypeAny>(
  schema: T,
  raw: unknown,
  rename: (path: string) => string = (p) => p,
): { data?: z.output<T>; problems: string[] } {
  const parsed = schema.safeParse(raw, { error: errorMap });
  if (parsed.success) return { data: parsed.data, problems: [] };
  return {
    problems: zodIssues(parsed.error, raw).map(
      (i) => `${rename(i.path.replace(/^klutch:?/, ""))}: ${i.message}`,
    ),
  };
}

/** The object without its undefined entries (inputs not given), so the config model's defaults apply. */
export function given<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A Kubernetes provider for a component given a kubeconfig, beside the component (same parent). */
export function clusterProvider(
  name: string,
  kubeconfig: pulumi.Input<string>,
  opts: pulumi.ComponentResourceOptions,
) {
  return kubeconfigProvider(`${name}-kubernetes`, kubeconfig, undefined, opts.parent);
}

/**
 * One field of one item of a list input, as an Output that keeps the list's dependencies and
 * secrecy (a kubeconfig inside appClusters[i] stays a secret, and waits for what made it).
 */
export function itemField<T>(list: pulumi.Input<Args[]>, index: number, field: string): pulumi.Output<T> {
  return pulumi.output(list).apply((items) => (items[index] as Args)[field] as T);
}

/** Whether every one of these resolved values is known (a check over them can run now). */
export function allKnown(...values: unknown[]): boolean {
  return values.every(isKnown);
}

/** A known string value, or undefined (not given or not known yet). */
export function knownString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Checks a component's `dataServicePorts` as the config does (lib/config/fields.ts). */
export function dataServicePortsOf(ports: unknown) {
  return zodProblems(z.object({ dataServicePorts }), given({ dataServicePorts: ports }));
}
