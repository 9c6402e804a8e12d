import * as pulumi from "@pulumi/pulumi";
import { settle, valueOf } from "./mocks";

/** How the engine sends a value it does not know yet (@pulumi/pulumi runtime/rpc unknownValue). */
export const ENGINE_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A constructed component's outputs (KlutchProvider.construct's state), resolved, and which are secret. */
export async function outputsOf(
  state: Record<string, unknown>,
): Promise<{ values: Record<string, unknown>; secret: Set<string> }> {
  const values: Record<string, unknown> = {};
  const secret = new Set<string>();
  for (const [key, v] of Object.entries(state)) {
    const out = pulumi.output(v) as pulumi.Output<unknown>;
    values[key] = await valueOf(out);
    if (await pulumi.isSecret(out)) secret.add(key);
  }
  return { values, secret };
}

/** Lets the registrations a component started (and their applies) reach the mocks. */
export async function finish(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 30));
  }
}

/** Records each registration's explicit dependencies (URNs) by resource name, as the engine gets them. */
export function recordDependencies(): Map<string, string[]> {
  const deps = new Map<string, string[]>();
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    registerResource(req: RegisterRequest, cb: unknown): unknown;
  };
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) => {
    deps.set(req.getName(), req.getDependenciesList());
    return register(req, cb);
  };
  return deps;
}

interface RegisterRequest {
  getName(): string;
  getDependenciesList(): string[];
}
