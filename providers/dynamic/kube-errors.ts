/**
 * The HTTP status of a failed Kubernetes client call, or undefined when there was no answer
 * (connection refused, DNS: @kubernetes/client-node 2.x rejects with undici's `TypeError: fetch
 * failed`, no `code`; 1.x's node-fetch error had the system error's name there, never a number).
 * An answer is an ApiException with `code`; `statusCode` and `response.statusCode` are where 0.x's
 * HttpError and plain HTTP errors carry it.
 *
 * The dynamic providers' methods call it at run time: a plain function, so Pulumi's closure
 * serializer copies it into the provider by value (no `require` of this file).
 */
export function statusCode(err: unknown): number | undefined {
  const e = err as { code?: number; statusCode?: number; response?: { statusCode?: number } };
  return e.code ?? e.statusCode ?? e.response?.statusCode;
}
