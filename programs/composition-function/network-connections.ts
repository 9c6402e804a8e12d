/**
 * The network connections behind a binding of any data service: the seed's "each data service
 * instance port gets its own TCPConnection resource". After the backend's binding step, this
 * step reads the binding's credentials, finds every endpoint they name for the claim's
 * spec.serviceInstanceType (services/<type>/credentials.ts), composes one XTCPConnection per
 * endpoint, and publishes the credentials with every host, port, host list and URI naming the
 * endpoint's path for the app cluster (services/contract/references.ts).
 *
 * As network-connection.ts: the claim's Secret never names a host the app cluster cannot reach,
 * so nothing is published until every connection is Ready. One that is not names itself, its
 * endpoint and its reason on the claim; the others keep their paths. An endpoint the
 * credentials stop naming has its connection released.
 *
 * Pure: observed resources in, desired state out.
 */
import type { NetworkConnectionsInput } from "./input.js";
import type { JsonObject } from "./json.js";
import {
  CONNECTION_READY,
  consumerEndpoint,
  instanceTypeOf,
  notReadyMessage,
  parsePort as portOf,
  tcpConnection,
} from "./network-connection.js";
import { instanceNames } from "./instance-names.js";
import { joinHostPort } from "./services/contract/addresses.js";
import { addressOf, endpointsOf, rewriteCredentials, type Endpoint } from "./services/contract/references.js";
import { dataServiceOf } from "./services/registry.js";
import { isReadyTrue, stringAt, type ObservedResource, type StepResult } from "./step.js";
import type { DesiredComposed } from "./patch-and-transform.js";

/** The composed connections' names in the pipeline: `connection-<label>`, then `-1`, `-2` for more of a label. */
export const CONNECTIONS_PREFIX = "connection-";

export function connectionNames(endpoints: readonly Endpoint[]): string[] {
  const seen = new Map<string, number>();
  return endpoints.map((e) => {
    const slug =
      e.label
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, "-")
        .replace(/^-|-$/g, "") || "endpoint";
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    return `${CONNECTIONS_PREFIX}${slug}${n === 0 ? "" : `-${n}`}`;
  });
}

/** The connections already composed, as they were, for a call that cannot compose them afresh. */
function keptConnections(
  observed: Readonly<Record<string, ObservedResource>>,
  implementation: string | undefined,
): DesiredComposed[] {
  return Object.entries(observed).flatMap(([name, o]) => {
    const host = stringAt(o.resource, "spec", "instanceHost");
    const port = portOf((o.resource.spec as JsonObject | undefined)?.port);
    if (!name.startsWith(CONNECTIONS_PREFIX) || !host || port === undefined) return [];
    return [
      {
        name,
        resource: tcpConnection({ host, port }, implementation, instanceTypeOf(o.resource)),
        ready: isReadyTrue(o.resource),
      },
    ];
  });
}

function waiting(
  observed: Readonly<Record<string, ObservedResource>>,
  input: NetworkConnectionsInput,
  reason: string,
  message: string,
  warn: boolean,
): StepResult {
  const composed = keptConnections(observed, input.implementation);
  return {
    composed,
    ...instanceNames(
      composed.map((c) => observed[c.name]?.resource),
      input.instanceZones,
    ).patch,
    compositeReady: false,
    connectionDetails: {},
    conditions: [{ type: CONNECTION_READY, status: "False", reason, message }],
    results: warn ? [{ severity: "Warning", message }] : [],
  };
}

export function composeNetworkConnections(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  input: NetworkConnectionsInput,
): StepResult {
  const type = stringAt(composite, "spec", "serviceInstanceType");
  const service = dataServiceOf(type);
  if (!service)
    return waiting(
      observed,
      input,
      "UnsupportedServiceType",
      `spec.serviceInstanceType is ${JSON.stringify(type ?? "")}, whose credentials this composition cannot read; set it to the instance's type`,
      true,
    );
  const credentials = observed[input.credentialsFrom]?.connectionDetails ?? {};
  const refs = service.references(Object.keys(credentials));
  const found = endpointsOf(credentials, refs);
  const from = `composed resource ${JSON.stringify(input.credentialsFrom)}`;
  if (found.kind !== "found")
    return found.kind === "waiting"
      ? waiting(
          observed,
          input,
          "WaitingForCredentials",
          `waiting for ${from}'s credentials: ${found.message}`,
          false,
        )
      : waiting(
          observed,
          input,
          "InvalidCredentials",
          `${from}'s ${found.message.replace(/^the credentials' /, "")}; the connections wait for valid credentials`,
          true,
        );

  const names = connectionNames(found.endpoints);
  const paths = found.endpoints.map((endpoint, i) => {
    const current = observed[names[i]!]?.resource;
    const ready = isReadyTrue(current);
    return {
      endpoint,
      current,
      composed: {
        name: names[i]!,
        resource: tcpConnection(endpoint, input.implementation, service.instanceType),
        ready,
      },
      consumer: ready ? consumerEndpoint(current!, endpoint) : undefined,
    };
  });
  const composed = paths.map((p) => p.composed);
  const { names: given, patch: namePatch } = instanceNames(
    paths.map((p) => p.current),
    input.instanceZones,
  );
  const describe = (e: Endpoint) => `${e.label} endpoint ${joinHostPort(e.host, e.port)}`;
  const failing = paths.filter((p) => !p.consumer);
  if (failing.length > 0) {
    const why = failing.map(
      (p) => `${describe(p.endpoint)} (${p.composed.name}): ${notReadyMessage(p.current, p.composed.ready)}`,
    );
    const message = `${failing.length} of ${paths.length} connections not Ready: ${why.join("; ")}`;
    return {
      composed,
      ...namePatch,
      compositeReady: false,
      connectionDetails: {},
      conditions: [{ type: CONNECTION_READY, status: "False", reason: "ConnectionNotReady", message }],
      // Just composed, a connection has nothing to report yet; once observed, why it is not Ready is news.
      results: failing.some((p) => p.current) ? [{ severity: "Warning", message }] : [],
    };
  }
  // A host the app cluster resolves to its path (instance-names.ts) keeps its name; its port is the path's.
  const kept = new Set(given.map((n) => n.name));
  const byAddress = new Map(
    paths.map((p) => [
      addressOf(p.endpoint),
      kept.has(p.endpoint.host.toLowerCase().replace(/\.$/, ""))
        ? { host: p.endpoint.host, port: p.consumer!.port }
        : p.consumer!,
    ]),
  );
  const details = rewriteCredentials(credentials, refs, (e) => byAddress.get(addressOf(e))!);
  const reached = paths.map(
    (p) => `${describe(p.endpoint)} at ${joinHostPort(p.consumer!.host, p.consumer!.port)}`,
  );
  return {
    composed,
    ...namePatch,
    connectionDetails: details,
    conditions: [
      {
        type: CONNECTION_READY,
        status: "True",
        reason: "ConnectionEstablished",
        message: `the app cluster reaches ${paths.length === 1 ? "the instance's endpoint" : `each of the instance's ${paths.length} endpoints`}: ${reached.join("; ")}`,
      },
    ],
    results: [],
  };
}
