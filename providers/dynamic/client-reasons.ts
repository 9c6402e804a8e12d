import type * as pulumi from "@pulumi/pulumi";
import { clientErrorMessage } from "../../lib/kube/client-errors";

/**
 * The provider with every method's failure said with its reason. The engine's dynamic-provider
 * host hands the user `e.message` alone (@pulumi/pulumi cmd/dynamic-provider/index.ts,
 * grpcResponseFromError), and since @kubernetes/client-node 2.0 a request that got no answer
 * fails with a bare "fetch failed", its reason (ECONNREFUSED, a DNS or certificate error) only
 * in `cause`. So the reason is written into the message, on the same error object: what else
 * it carries (an `id` of a resource made but not initialised) stays.
 *
 * A plain function over the provider's own methods (every provider here is an object literal),
 * so Pulumi's closure serializer copies it and each wrapped method by value, as it does the
 * provider.
 */
export function withClientReasons<P extends pulumi.dynamic.ResourceProvider>(provider: P): P {
  const wrapped: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(provider)) {
    if (typeof member !== "function") {
      wrapped[name] = member;
      continue;
    }
    const method = member as (...args: unknown[]) => unknown;
    wrapped[name] = async (...args: unknown[]) => {
      try {
        return await method.apply(provider, args);
      } catch (err) {
        if (err instanceof Error && err.cause instanceof Error) err.message = clientErrorMessage(err);
        throw err;
      }
    };
  }
  return wrapped as P;
}
