/**
 * The network connection behind a binding: after a backend step composed the binding's
 * credentials (local-binding.ts, or a real a8s/a9s binding), this step composes the connector's
 * XTCPConnection (klutch.anynines.com/v1) to the host and port in them, and rewrites the
 * credentials the binding publishes to the host and port the connection realised for the app
 * cluster (its status.hostForConsumer and status.port).
 *
 * The binding publishes credentials only while the connection is Ready: its claim's Secret must
 * never hold a host the app cluster cannot reach. Crossplane merges what is published into the
 * Secret and never removes a key, so a connection that stops being Ready leaves the last good
 * values there; what this step guarantees is that it never publishes the backend's own host.
 *
 * Pure: observed resources in, desired state out.
 */
import type { NetworkConnectionInput } from "./input.js";
import { instanceNames } from "./instance-names.js";
import { parsePort as portOfText } from "./services/contract/addresses.js";
import { isJsonObject, type JsonObject } from "./json.js";
import type { Message } from "./patch-and-transform.js";
import {
  conditionOf,
  isReadyTrue,
  stringAt,
  type ConnectionDetails,
  type ObservedResource,
  type StepCondition,
  type StepResult,
} from "./step.js";

/** The composed connection's name in the pipeline. */
export const CONNECTION_RESOURCE = "connection";
export const CONNECTION_API_VERSION = "klutch.anynines.com/v1";
export const CONNECTION_KIND = "XTCPConnection";
export const CONNECTION_READY = "ConnectionReady";
/** The keys added to the published credentials: where the app cluster connects. */
export const HOST_KEY = "host";
export const PORT_KEY = "port";
export const URI_KEY = "uri";

/**
 * The connector's composition for an implementation, named as lib/connector-api/compositions.ts
 * names it. Written here again because the function's image holds only this folder
 * (host/local-clusters/images/function-image.ts); connector-compositions.test.ts checks the two agree
 * for every registered implementation. The input is already a DNS label (input.ts refuses any
 * other), so the connector's lower-casing is a no-op here.
 */
export function compositionName(implementation: string): string {
  return `xtcpconnections-${implementation}`;
}

export interface Endpoint {
  host: string;
  port: number;
}

/** A TCP port, from a number or the decimal string a Secret holds; undefined for anything else. */
export function parsePort(value: unknown): number | undefined {
  if (typeof value === "string") return portOfText(value);
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535
    ? value
    : undefined;
}

type BackendEndpoint =
  { kind: "found"; endpoint: Endpoint } | { kind: "waiting" | "invalid"; message: string };

/** The instance's host and port in the backend's credentials. */
function backendEndpoint(details: ConnectionDetails, input: NetworkConnectionInput): BackendEndpoint {
  const from = `composed resource ${JSON.stringify(input.credentialsFrom)}`;
  const host = details[input.hostKey]?.toString("utf8");
  if (!host)
    return {
      kind: "waiting",
      message: `waiting for the backend's credentials: ${from} has no connection detail ${JSON.stringify(input.hostKey)} yet`,
    };
  const raw = input.portKey !== undefined ? details[input.portKey]?.toString("utf8") : undefined;
  if (raw === undefined) {
    if (input.defaultPort !== undefined)
      return { kind: "found", endpoint: { host, port: input.defaultPort } };
    return {
      kind: "waiting",
      message: `waiting for the backend's credentials: ${from} has no connection detail ${JSON.stringify(input.portKey)} yet, and the input sets no defaultPort`,
    };
  }
  const port = parsePort(raw);
  if (port === undefined)
    return {
      kind: "invalid",
      message: `${from}'s connection detail ${JSON.stringify(input.portKey)} is ${JSON.stringify(raw)}, not a port number from 1 to 65535; the connection waits for a valid one`,
    };
  return { kind: "found", endpoint: { host, port } };
}

function connection(endpoint: Endpoint, input: NetworkConnectionInput, instanceType?: string): JsonObject {
  return tcpConnection(endpoint, input.implementation, instanceType);
}

/**
 * The connector's XTCPConnection to one endpoint, through `implementation` or the XRD's default,
 * with the instance's software as its InstanceType enhancement where the service is known
 * (services/contract/shape.ts instanceType).
 */
export function tcpConnection(
  endpoint: Endpoint,
  implementation: string | undefined,
  instanceType?: string,
): JsonObject {
  return {
    apiVersion: CONNECTION_API_VERSION,
    kind: CONNECTION_KIND,
    spec: {
      instanceHost: endpoint.host,
      port: endpoint.port,
      ...(instanceType ? { enhancements: [{ InstanceType: instanceType }] } : {}),
      ...(implementation ? { compositionRef: { name: compositionName(implementation) } } : {}),
    },
  };
}

/** The InstanceType an observed connection was composed with, to compose it again as it was. */
export function instanceTypeOf(connection: JsonObject | undefined): string | undefined {
  const spec = isJsonObject(connection?.spec) ? connection.spec : {};
  const enhancements: unknown[] = Array.isArray(spec.enhancements) ? spec.enhancements : [];
  for (const e of enhancements)
    if (isJsonObject(e) && typeof e.InstanceType === "string") return e.InstanceType;
  return undefined;
}

/** host:port as a URI's authority writes it: an IPv6 address in brackets. */
function authority(host: string, port: number): string {
  return `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
}

/**
 * `uri` with its host and port replaced: scheme://[userinfo@]host[:port][/path][?query][#fragment],
 * everything but host:port kept as it is. Undefined for anything else, a URI of several hosts
 * (host1:5432,host2:5432) included, as there is no single host to replace.
 */
export function rewriteUri(uri: string, host: string, port: number): string | undefined {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(uri);
  if (!scheme) return undefined;
  const rest = uri.slice(scheme[0].length);
  // The authority ends at the path, query or fragment; a userinfo holds none of /?# unencoded.
  const end = rest.search(/[/?#]/);
  const auth = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? "" : rest.slice(end);
  const at = auth.lastIndexOf("@");
  const userinfo = at < 0 ? "" : auth.slice(0, at + 1);
  const hostPort = auth.slice(at + 1);
  if (!/^(\[[0-9A-Fa-f:.]+\]|[^:[\],@]+)(:\d*)?$/.test(hostPort)) return undefined;
  return `${scheme[0]}${userinfo}${authority(host, port)}${tail}`;
}

export function composeNetworkConnection(
  observed: Readonly<Record<string, ObservedResource>>,
  input: NetworkConnectionInput,
  /** The bound instance's software (services/registry.ts), for the connection's InstanceType. */
  instanceType?: string,
): StepResult {
  const backend = observed[input.credentialsFrom]?.connectionDetails ?? {};
  const observedConnection = observed[CONNECTION_RESOURCE]?.resource;
  const found = backendEndpoint(backend, input);

  if (found.kind !== "found") {
    // An existing connection stays (leaving it out of desired state would delete it) as it was
    // composed; a new one waits for the host, without a warning each call while the backend starts.
    const kept = keptConnection(observedConnection, input);
    return {
      composed: kept
        ? [{ name: CONNECTION_RESOURCE, resource: kept, ready: isReadyTrue(observedConnection) }]
        : [],
      ...instanceNames([kept ? observedConnection : undefined], input.instanceZones).patch,
      compositeReady: false,
      connectionDetails: {},
      conditions: [
        {
          type: CONNECTION_READY,
          status: "False",
          reason: found.kind === "waiting" ? "WaitingForCredentials" : "InvalidCredentials",
          message: found.message,
        },
      ],
      results: found.kind === "invalid" ? [{ severity: "Warning", message: found.message }] : [],
    };
  }

  const { endpoint } = found;
  const ready = isReadyTrue(observedConnection);
  const composed = [
    { name: CONNECTION_RESOURCE, resource: connection(endpoint, input, instanceType), ready },
  ];
  const path = ready ? consumerEndpoint(observedConnection!, endpoint) : undefined;
  const given = instanceNames([observedConnection], input.instanceZones);
  const names = given.patch;
  // A host the app cluster resolves to its path keeps its name; its port is the path's.
  const named = given.names.length > 0;
  const consumer = path && named ? { host: endpoint.host, port: path.port } : path;
  if (!consumer) {
    const message = notReadyMessage(observedConnection, ready);
    return {
      composed,
      ...names,
      compositeReady: false,
      connectionDetails: {},
      conditions: [{ type: CONNECTION_READY, status: "False", reason: "ConnectionNotReady", message }],
      // Just composed, it has nothing to report yet; once observed, why it is not Ready is news.
      results: observedConnection ? [{ severity: "Warning", message }] : [],
    };
  }

  const results: Message[] = [];
  const details: Record<string, Buffer> = { ...backend };
  details[HOST_KEY] = Buffer.from(consumer.host);
  details[PORT_KEY] = Buffer.from(String(consumer.port));
  // An app written against the backend's own keys (a8s's `instance_service`) must reach the
  // path too: the backend's host and port keys name the consumer's endpoint as well.
  details[input.hostKey] = Buffer.from(consumer.host);
  if (input.portKey) details[input.portKey] = Buffer.from(String(consumer.port));
  const uri = backend[URI_KEY];
  if (uri) {
    const rewritten = rewriteUri(uri.toString("utf8"), consumer.host, consumer.port);
    if (rewritten !== undefined) details[URI_KEY] = Buffer.from(rewritten);
    else
      results.push({
        severity: "Warning",
        message: `the backend's connection detail "uri" is not of the form scheme://user:password@host:port/path, so it is published as the backend wrote it, with the instance's own host; connect to "host" and "port" instead`,
      });
  }
  const condition: StepCondition = {
    type: CONNECTION_READY,
    status: "True",
    reason: "ConnectionEstablished",
    message: `the app cluster reaches the instance at ${authority(path!.host, path!.port)}${named ? ` (its own name ${endpoint.host} resolves there)` : ""}`,
  };
  return { composed, ...names, connectionDetails: details, conditions: [condition], results };
}

/**
 * Where the app cluster connects through a Ready connection: its status.hostForConsumer and
 * status.port; the instance's own host and port when it reports no host (the NOOP
 * implementation realises no path: the app reaches the instance directly). Undefined when it
 * reports a host without a port, which nothing could connect to.
 */
export function consumerEndpoint(connection: JsonObject, instance: Endpoint): Endpoint | undefined {
  const host = stringAt(connection, "status", "hostForConsumer");
  if (!host) return instance;
  const status = isJsonObject(connection.status) ? connection.status : {};
  const port = parsePort(status.port);
  return port === undefined ? undefined : { host, port };
}

export function notReadyMessage(connection: JsonObject | undefined, ready: boolean): string {
  if (!connection) return "the connection to the instance was just requested; it is not Ready yet";
  if (ready)
    return `the connection is Ready but reports status.hostForConsumer without a valid status.port (${JSON.stringify(
      (connection.status as JsonObject).port ?? null,
    )})`;
  const condition = conditionOf(connection, "Ready");
  const message = typeof condition?.message === "string" ? condition.message : "";
  const reason = typeof condition?.reason === "string" ? ` (${condition.reason})` : "";
  return message !== ""
    ? `the connection to the instance is not Ready${reason}: ${message}`
    : `the connection to the instance is not Ready yet${reason}`;
}

/** The observed connection as it was composed, for a call that cannot compose it afresh. */
function keptConnection(
  observed: JsonObject | undefined,
  input: NetworkConnectionInput,
): JsonObject | undefined {
  const host = stringAt(observed, "spec", "instanceHost");
  const spec = isJsonObject(observed?.spec) ? observed.spec : {};
  const port = parsePort(spec.port);
  return host && port !== undefined ? connection({ host, port }, input, instanceTypeOf(observed)) : undefined;
}
