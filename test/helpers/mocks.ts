import * as pulumi from "@pulumi/pulumi";

/** A resource the program registered, as the engine would have seen it. */
export interface Registered {
  type: string;
  name: string;
  inputs: Record<string, any>;
  provider?: string;
  parent?: string;
  /** What a real dynamic provider returned as state (see MockOptions.dynamicProviders). */
  outputs?: Record<string, any>;
}

export interface MockedRun {
  /** Every resource registered so far (components included), in order. */
  resources: Registered[];
  /** Only the resources of one type token. */
  ofType(type: string): Registered[];
}

/**
 * The one mocks helper of the unit tests: it records every registration with its inputs,
 * provider and parent, and sets the stack config the program reads. Cloud resources get
 * an id and echo their inputs as state, which is all our components depend on.
 */
export function mockPulumi(
  config: Record<string, unknown>,
  stack = "test",
  options: MockOptions = {},
): MockedRun {
  const resources: Registered[] = [];
  // setMocks returns a promise only for the async form of mocks; ours are synchronous.
  void pulumi.runtime.setMocks(
    {
      async newResource(args: pulumi.runtime.MockResourceArgs) {
        const registered: Registered = {
          type: args.type,
          name: args.name,
          inputs: args.inputs as Record<string, any>,
          provider: args.provider,
        };
        resources.push(registered);
        const dynamic = options.dynamicProviders?.[args.type];
        if (dynamic) {
          // A dynamic provider computes its outputs; run the real one as the engine would.
          const inputs = args.inputs as Record<string, unknown>;
          const checked = dynamic.check ? await dynamic.check({}, inputs) : { inputs };
          const created = await dynamic.create(checked.inputs ?? inputs);
          registered.outputs = { ...inputs, ...(created.outs as Record<string, unknown>) };
          return { id: created.id, state: registered.outputs };
        }
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call(args: pulumi.runtime.MockCallArgs) {
        return args.inputs;
      },
    },
    "klutch",
    stack,
    false,
  );
  const serialized = Object.fromEntries(
    Object.entries(config).map(([k, v]) => [`klutch:${k}`, typeof v === "string" ? v : JSON.stringify(v)]),
  );
  pulumi.runtime.setAllConfig(serialized);
  return { resources, ofType: (type) => resources.filter((r) => r.type === type) };
}

export interface MockOptions {
  /**
   * Dynamic providers to run for real behind the mocks, by type token
   * (`pulumi-nodejs:dynamic/klutch:<Kind>`): their check and create make the state.
   */
  dynamicProviders?: Record<string, pulumi.dynamic.ResourceProvider<any, any>>;
}

// Pulumi's wire signature for secret values (sdk/nodejs/runtime/rpc.ts specialSigKey/specialSecretSig).
export const SECRET_SIG = "4dabf18193072939515e22adb298388d";
export const SECRET_MARKER = "1b47061264138c4ac30d75fd1eb44270";

/** Whether a registered input is a secret (the mocks see secrets in their wire envelope). */
export function isSecretEnvelope(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_MARKER;
}

/** Every string reachable from `v` outside secret envelopes. */
export function plainStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (isSecretEnvelope(v)) return out;
  else if (Array.isArray(v)) v.forEach((x) => plainStrings(x, out));
  else if (typeof v === "object" && v !== null) Object.values(v).forEach((x) => plainStrings(x, out));
  return out;
}

/** Resolves an Output in a mocked run (the value of a known output). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/** Waits until every registration the program started has reached the mocks. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
