import { z } from "zod/v4";

/**
 * The network preview report: what a change does to each data-service connection. The zod
 * schema is the one definition; the TypeScript types and the published JSON Schema
 * (`reportJsonSchema()`, draft 2020-12) are derived from it, so they cannot drift apart.
 * Bump SCHEMA_VERSION on any change a consumer of the JSON could notice (a field removed,
 * renamed, or a meaning changed); adding an optional field is not such a change.
 */
export const SCHEMA_VERSION = "klutch.anynines.com/network-preview/v1";

/** Per connection, worst first in RISK_ORDER. */
export const RISKS = [
  "none",
  "added",
  "removed",
  "unknown",
  "endpoint-changed",
  "interruption",
  "broken",
] as const;

/** Where a value is known only after `up` (a new load balancer's address, say). */
export const UNKNOWN = "unknown" as const;

const portRange = z.object({ from: z.number().int(), to: z.number().int() });

export const endpointSchema = z.object({
  host: z.string(),
  port: z.union([z.number().int(), z.literal(UNKNOWN)]),
  /** When only the set is known (several new connections share a group): the ports they will take. */
  candidates: z.array(z.number().int()).optional(),
});

export const HOP_KINDS = [
  "proxy-port",
  "proxy-frontend",
  /** The instance endpoints a kernel-hop path forwards to (its EndpointSlices). */
  "kernel-endpoints",
  "proxy-settings",
  "wireguard-peer",
  "peering-route",
  "security-group-rule",
  "openstack-route",
  "probe",
  "app-cluster",
  "other",
] as const;

export const OPERATIONS = ["create", "update", "replace", "delete", "same", "read", "refresh"] as const;

export const hopSchema = z.object({
  kind: z.enum(HOP_KINDS),
  op: z.enum(OPERATIONS),
  urn: z.string(),
  type: z.string(),
  /** Property paths the engine reported as changed (detailed diff keys). */
  diffPaths: z.array(z.string()),
  /** Why the engine replaces (the properties that force it). */
  replaceReasons: z.array(z.string()).optional(),
  /** A replacement that deletes the old resource before the new one exists: traffic stops meanwhile. */
  deleteBeforeReplace: z.boolean().optional(),
  /** One line for humans: e.g. "range 42000-42049 → 42100-42149". */
  detail: z.string().optional(),
});

export const connectionSchema = z.object({
  /** The NetworkPath name, or `pending:<namespace>/<claim>` for a claim not composed yet. */
  id: z.string(),
  change: z.enum(["add", "delete", "keep"]),
  implementation: z.string(),
  consumer: z.object({ namespace: z.string(), cluster: z.string().optional() }),
  instance: z.object({ host: z.string(), port: z.number().int() }),
  before: endpointSchema.optional(),
  after: endpointSchema.optional(),
  hops: z.array(hopSchema),
  risk: z.enum(RISKS),
  reasons: z.array(z.string()),
});

export const exposureRuleSchema = z.object({
  source: z.string(),
  destination: z.string(),
  protocol: z.enum(["tcp", "udp", "all"]),
  ports: portRange,
  /** The resource that grants it (URN). */
  via: z.string().optional(),
});

export const exposureSchema = z.object({
  before: z.array(exposureRuleSchema),
  after: z.array(exposureRuleSchema),
  added: z.array(exposureRuleSchema),
  removed: z.array(exposureRuleSchema),
  /** Rules that let in a source no rule before covered, for an existing destination or from the internet. */
  widened: z.array(exposureRuleSchema.extend({ why: z.string() })),
});

export const portsSchema = z.object({
  groups: z.array(
    z.object({
      group: z.string(),
      rangeBefore: portRange.optional(),
      rangeAfter: portRange,
      used: z.number().int(),
      headroom: z.union([z.number().int(), z.literal(UNKNOWN)]),
    }),
  ),
  reassigned: z.array(
    z.object({ group: z.string(), id: z.string(), from: z.number().int(), to: z.number().int() }),
  ),
  allocated: z.array(z.object({ group: z.string(), id: z.string(), port: z.number().int() })),
  freed: z.array(z.object({ group: z.string(), id: z.string(), port: z.number().int() })),
  unplaced: z.array(z.object({ group: z.string(), id: z.string() })),
});

export const blastSchema = z.object({
  urn: z.string(),
  kind: z.enum(HOP_KINDS),
  op: z.enum(OPERATIONS),
  connections: z.number().int(),
  namespaces: z.number().int(),
  clusters: z.number().int(),
  ids: z.array(z.string()),
});

export const policySchema = z.object({
  policy: z.string(),
  enforcement: z.string(),
  message: z.string(),
  urn: z.string().optional(),
});

/** A created or deleted resource the cost estimate prices. */
const costedResource = z.object({ urn: z.string(), type: z.string(), op: z.enum(OPERATIONS) });

export const costSchema = z.object({
  /** False when no environment stack was previewed: connection changes alone cost nothing listed. */
  estimated: z.boolean(),
  currency: z.literal("USD").optional(),
  /** The monthly change of what has a list price; an estimate, never a bill. */
  monthlyDeltaUsd: z.number().optional(),
  items: z.array(costedResource.extend({ monthlyUsd: z.number(), what: z.string(), source: z.string() })),
  /** Created or deleted resources that cost money but have no list price here. */
  unpriced: z.array(costedResource.extend({ why: z.string() })),
  note: z.string(),
  /**
   * What created or deleted resources charge per GB of traffic through them. Totals only when
   * the preview was told how much traffic to assume (`--traffic-gb`): traffic is not planned state.
   */
  traffic: z
    .object({
      /** GB per month assumed through each priced resource; absent: per-GB prices only. */
      gbPerMonth: z.number().optional(),
      monthlyDeltaUsd: z.number().optional(),
      items: z.array(
        costedResource.extend({
          usdPerGb: z.number(),
          monthlyUsd: z.number().optional(),
          what: z.string(),
          source: z.string(),
        }),
      ),
    })
    .optional(),
});

export const reportSchema = z.object({
  schemaVersion: z.literal(SCHEMA_VERSION),
  /** What was previewed: the environment stack, a connections file, a control plane. */
  sources: z.array(
    z.object({ kind: z.enum(["environment", "connections", "control-plane"]), ref: z.string() }),
  ),
  summary: z.object({
    /** 0 no network change, 3 safe changes, 4 endpoint change or interruption, 5 broken, widened or a mandatory policy violation. */
    grade: z.union([z.literal(0), z.literal(3), z.literal(4), z.literal(5)]),
    line: z.string(),
    risks: z.record(z.enum(RISKS), z.number().int()),
    widened: z.number().int(),
    changedHops: z.number().int(),
    /** CrossGuard violations on the planned state (mandatory ones grade 5). */
    policyViolations: z.number().int().optional(),
  }),
  connections: z.array(connectionSchema),
  /** Changed resources no connection depends on (e.g. a new app cluster's peering before any claim). */
  otherChanges: z.array(hopSchema),
  exposure: exposureSchema,
  ports: portsSchema,
  blastRadius: z.array(blastSchema),
  policy: z.array(policySchema),
  cost: costSchema,
  notes: z.array(z.string()),
});

export type Risk = (typeof RISKS)[number];
export type HopKind = (typeof HOP_KINDS)[number];
export type Operation = (typeof OPERATIONS)[number];
export type Endpoint = z.infer<typeof endpointSchema>;
export type Hop = z.infer<typeof hopSchema>;
export type ConnectionReport = z.infer<typeof connectionSchema>;
export type ExposureRule = z.infer<typeof exposureRuleSchema>;
export type ExposureDelta = z.infer<typeof exposureSchema>;
export type PortsReport = z.infer<typeof portsSchema>;
export type BlastEntry = z.infer<typeof blastSchema>;
export type PolicyResult = z.infer<typeof policySchema>;
export type CostReport = z.infer<typeof costSchema>;
export type NetworkPreviewReport = z.infer<typeof reportSchema>;
export type Grade = NetworkPreviewReport["summary"]["grade"];

/** The report's JSON Schema, for consumers in other languages (`--schema` prints it). */
export function reportJsonSchema(): Record<string, unknown> {
  return { $id: `https://${SCHEMA_VERSION}`, ...z.toJSONSchema(reportSchema) };
}
