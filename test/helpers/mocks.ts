import * as pulumi from "@pulumi/pulumi";
import { SECRET_MARKER, SECRET_SIG, isSecretEnvelope } from "../../lib/pulumi-secret";

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
  /** `start <type> <name>` when a registration reaches the mocks, `done …` when it returns. */
  events: string[];
}

/**
 * The one mocks helper of the unit tests: it records every registration with its inputs,
 * provider and parent, and sets the stack config the program reads. Cloud resources get
 * an id and echo their inputs as state, which is all our components depend on.
 */
export function mockPulumi(
  config: Record<string, unknown>,
  stack = "test",
  options: MockOptions & CloudMockOptions = {},
): MockedRun {
  const resources: Registered[] = [];
  const events: string[] = [];
  // Provider inputs by resource name, so cloud calls can answer for the provider's region.
  const providerInputs = new Map<string, Record<string, any>>();
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
        events.push(`start ${args.type} ${args.name}`);
        const delay = options.delayMs?.(args) ?? 0;
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        // After the registration's own work: what depends on it starts after this line.
        queueMicrotask(() => events.push(`done ${args.type} ${args.name}`));
        if (args.type.startsWith("pulumi:providers:")) providerInputs.set(args.name, args.inputs);
        const dynamic = options.dynamicProviders?.[args.type];
        if (dynamic) {
          // A dynamic provider computes its outputs; run the real one as the engine would.
          const inputs = args.inputs as Record<string, unknown>;
          const checked = dynamic.check ? await dynamic.check({}, inputs) : { inputs };
          const created = await dynamic.create(checked.inputs ?? inputs);
          registered.outputs = { ...inputs, ...(created.outs as Record<string, unknown>) };
          return { id: created.id, state: registered.outputs };
        }
        return { id: `${args.name}-id`, state: { ...computedState(args), ...args.inputs } };
      },
      call(args: pulumi.runtime.MockCallArgs) {
        const providerName = args.provider?.split("::")[3];
        const provider = providerName ? (providerInputs.get(providerName) ?? {}) : {};
        return cloudCall(args, provider, options) ?? args.inputs;
      },
    },
    "klutch",
    stack,
    options.preview ?? false,
  );
  const serialized = Object.fromEntries(
    Object.entries(config).map(([k, v]) => [`klutch:${k}`, typeof v === "string" ? v : JSON.stringify(v)]),
  );
  pulumi.runtime.setAllConfig(serialized);
  return { resources, events, ofType: (type) => resources.filter((r) => r.type === type) };
}

export interface MockOptions {
  /**
   * Dynamic providers to run for real behind the mocks, by type token
   * (`pulumi-nodejs:dynamic/klutch:<Kind>`): their check and create make the state.
   */
  dynamicProviders?: Record<string, pulumi.dynamic.ResourceProvider<any, any>>;
  /** How long a registration takes (ms), e.g. a slow namespace, to show what waits for it. */
  delayMs?: (args: pulumi.runtime.MockResourceArgs) => number;
  /** Run as a preview (`pulumi.runtime.isDryRun()` true); an update otherwise. */
  preview?: boolean;
}

// Pulumi's wire form of secret values (lib/pulumi-secret.ts): the mocks see secrets so.
export { SECRET_MARKER, SECRET_SIG, isSecretEnvelope };

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

/** What the cloud would say that the program cannot know; used by the AWS and OpenStack tests. */
export interface CloudMockOptions {
  /** Availability zone names by region; default: one per zone the region offers (`<region>a`, …). */
  zones?: Record<string, string[]>;
}

const ZONE_LETTERS = "abcdef";
// Known zone counts, so a test of "more zones than the region has" asks the mock, not a constant.
const MOCK_REGION_ZONES: Record<string, number> = {
  "eu-central-1": 3,
  "eu-west-1": 3,
  "us-west-1": 2,
  "us-east-1": 6,
};

/** Answers for the provider functions (invokes) our components call. */
function cloudCall(
  args: pulumi.runtime.MockCallArgs,
  provider: Record<string, any>,
  options: CloudMockOptions,
): Record<string, any> | undefined {
  switch (args.token) {
    case "aws:index/getAvailabilityZones:getAvailabilityZones": {
      const region = String(provider.region ?? "us-east-1");
      const names =
        options.zones?.[region] ??
        Array.from({ length: MOCK_REGION_ZONES[region] ?? 3 }, (_, i) => `${region}${ZONE_LETTERS[i]}`);
      return { id: region, names, zoneIds: names.map((n) => `${n}-id`), groupNames: names, region };
    }
    case "aws:eks/getCluster:getCluster": {
      const name = String(args.inputs.name);
      return {
        id: name,
        name,
        endpoint: `https://${name}.eks.example.test`,
        certificateAuthorities: [{ data: Buffer.from(`ca of ${name}`).toString("base64") }],
        vpcConfig: { clusterSecurityGroupId: `sg-${name}` },
      };
    }
    default:
      return undefined;
  }
}

/** Outputs the cloud computes on create (ARNs, endpoints, kubeconfigs); inputs still win. */
function computedState(args: pulumi.runtime.MockResourceArgs): Record<string, any> {
  switch (args.type) {
    case "aws:iam/role:Role":
      return { arn: `arn:aws:iam::123456789012:role/${args.name}`, name: args.name };
    case "aws:eks/cluster:Cluster":
      return {
        arn: `arn:aws:eks:eu-central-1:123456789012:cluster/${args.name}`,
        endpoint: `https://${args.name}.eks.example.test`,
        certificateAuthority: { data: Buffer.from(`ca of ${args.name}`).toString("base64") },
        vpcConfig: { clusterSecurityGroupId: `sg-${args.name}` },
      };
    case "openstack:containerinfra/cluster:Cluster":
      return {
        kubeconfig: {
          // As Magnum writes it: the cluster, an admin user and the current context naming both.
          rawConfig: `apiVersion: v1\nkind: Config\nclusters: [{name: ${args.name}, cluster: {server: "https://${args.name}.magnum.example.test:6443"}}]\nusers: [{name: admin, user: {token: fake}}]\ncontexts: [{name: default, context: {cluster: ${args.name}, user: admin}}]\ncurrent-context: default\n`,
        },
      };
    case "openstack:networking/floatingIp:FloatingIp":
      return { address: "203.0.113.10" };
    // What the API server and the token controller fill in.
    case "kubernetes:core/v1:Service":
      // The API server's own Service, read with Service.get: the service CIDR's first address.
      return args.id === "default/kubernetes" ? { spec: { clusterIP: "10.96.0.1" } } : {};
    case "kubernetes:core/v1:Secret":
      return (args.inputs as { type?: string }).type === "kubernetes.io/service-account-token"
        ? {
            data: {
              token: Buffer.from(`token of ${args.name}`).toString("base64"),
              "ca.crt": Buffer.from("-----BEGIN CERTIFICATE-----\nca\n").toString("base64"),
            },
          }
        : {};
    default:
      return {};
  }
}

/** URNs of everything registered in the current mocked run (components included). */
export function registeredUrns(): string[] {
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    getRegisteredResources(): Map<string, { urn: string }>;
  };
  return [...monitor.getRegisteredResources().keys()];
}

/** The parent's type token in a mocked URN (`…::Parent$Child::name`), or undefined at the root. */
export function parentTypeOf(urn: string): string | undefined {
  const qualified = urn.split("::")[2] ?? "";
  const parts = qualified.split("$");
  return parts.length > 1 ? parts[parts.length - 2] : undefined;
}

/** What a step of the real system adds to a registration's echoed result, or undefined to keep it. */
export type ServerSide = (
  args: pulumi.runtime.MockResourceArgs,
  echoed: pulumi.runtime.MockResourceResult,
) => Promise<pulumi.runtime.MockResourceResult | undefined> | pulumi.runtime.MockResourceResult | undefined;

/**
 * Layers what the real system computes over the shared mocks, which only echo inputs: the API
 * server's node ports and UIDs, a real dynamic provider's outputs. Call it after mockPulumi.
 */
export function withServerSide(serverSide: ServerSide): void {
  const monitor = pulumi.runtime.getMonitor() as unknown as { mocks: pulumi.runtime.Mocks };
  const shared = monitor.mocks;
  monitor.mocks = {
    call: (args) => shared.call(args),
    newResource: async (args) => {
      const echoed = await shared.newResource(args);
      return (await serverSide(args, echoed)) ?? echoed;
    },
  };
}
