/**
 * The words of a failed @kubernetes/client-node call, for a log line, a note or a message. Pure.
 *
 * An answer the API server gave is an ApiException whose message is its own (`HTTP-Code: 404`,
 * the Status in `body`): said as it is. A request that got no answer said why in its message up
 * to client-node 1.x (node-fetch: "request to https://… failed, reason: connect ECONNREFUSED
 * 127.0.0.1:6443"). Since 2.0 the client sends requests with undici's fetch, which rejects such a
 * request with a bare `TypeError: fetch failed` and keeps the reason (the socket's error, a DNS
 * or certificate error) in `cause`; the cause's words are added back here, so the line still
 * says why. A cause without a message (Node's AggregateError of every address tried) gives its
 * code.
 */
export function clientErrorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  if (!(cause instanceof Error)) return message;
  const why = cause.message || (cause as { code?: unknown }).code;
  return typeof why === "string" && why ? `${message}: ${why}` : message;
}

/**
 * Whether the API server refused the call to this identity (403): the status code client-node
 * gives (`code`, or `statusCode` on a watch's error), or the Status's words ("… is forbidden").
 * A watch refused so is left off and said once, not retried (programs/bridge/drift-watch.ts,
 * instance-watch.ts).
 */
export function isForbidden(err: unknown): boolean {
  const e = err as { code?: number; statusCode?: number } | undefined;
  return (e?.code ?? e?.statusCode) === 403 || /forbidden/i.test(clientErrorMessage(err));
}

/** Whether the API server answered that the object (or its kind) is not there (404). */
export function isNotFound(err: unknown): boolean {
  return (err as { code?: number } | undefined)?.code === 404;
}
