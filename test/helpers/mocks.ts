import * as pulumi from "@pulumi/pulumi";

/** A resource the program registered, as the engine would have seen it. */
export interface Registered {
  type: string;
  name: string;
  inputs: Record<string, any>;
  provider?: string;
  parent?: string;
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
export function mockPulumi(config: Record<string, unknown>, stack = "test"): MockedRun {
  const resources: Registered[] = [];
  // setMocks returns a promise only for the async form of mocks; ours are synchronous.
  void pulumi.runtime.setMocks(
    {
      newResource(args: pulumi.runtime.MockResourceArgs) {
        resources.push({
          type: args.type,
          name: args.name,
          inputs: args.inputs as Record<string, any>,
          provider: args.provider,
        });
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

/** Resolves an Output in a mocked run (the value of a known output). */
export function valueOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => output.apply((v) => resolve(v)));
}

/** Waits until every registration the program started has reached the mocks. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}
