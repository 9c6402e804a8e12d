import * as pulumi from "@pulumi/pulumi";
import { withClientReasons } from "./client-reasons";

/**
 * Who runs the CRUD of Klutch's resources that have no cloud provider of their own (random keys,
 * export requests, the teardown drain, port allocations, ...):
 *
 * - `dynamic` (a TypeScript program, the bridge): a Pulumi dynamic resource. The engine runs its
 *   serialized provider through `pulumi-resource-pulumi-nodejs`, which needs `@pulumi/pulumi`
 *   and the provider's own modules resolvable from the program's directory.
 * - `plugin` (a component constructed by the `klutch` plugin for a YAML, Python, Go or .NET
 *   program): a custom resource of the plugin's own package, `klutch:internal:<Kind>`, whose CRUD
 *   the plugin serves from its own code (programs/klutch-provider/internal-resources.ts), as pulumi-eks serves its
 *   own resources. Nothing of the program's directory is needed, and no code is kept in the state.
 */
export type ResourceServing = "dynamic" | "plugin";

let serving: ResourceServing = "dynamic";

/** Set once by the plugin's entry point, before it serves anything (and by tests). */
export function setResourceServing(mode: ResourceServing): void {
  serving = mode;
}

/** The module of every Klutch dynamic resource's type token: `pulumi-nodejs:dynamic/klutch:<Kind>`. */
export const DYNAMIC_MODULE = "klutch";
/** The plugin's type of a kind: `klutch:internal:<Kind>`. */
export const internalType = (kind: string) => `klutch:internal:${kind}`;
/** The type the same resource has as a dynamic resource (@pulumi/pulumi dynamic/index.ts). */
export const dynamicType = (kind: string) => `pulumi-nodejs:dynamic/${DYNAMIC_MODULE}:${kind}`;

// Serialized once per provider object, as @pulumi/pulumi's dynamic.Resource does (its
// serializeProvider with cacheDynamicProviders, the default since 3.0).
const serialized = new WeakMap<object, pulumi.Output<string>>();

function serializeProvider(provider: pulumi.dynamic.ResourceProvider): pulumi.Output<string> {
  const cached = serialized.get(provider);
  if (cached) return cached;
  const served = withClientReasons(provider);
  const fn = pulumi.runtime.serializeFunction(() => served, { allowSecrets: true });
  // A provider that captured a secret is stored as a secret, as dynamic.Resource does.
  const text = pulumi
    .output(fn)
    .apply((f): pulumi.Output<string> => (f.containsSecrets ? pulumi.secret(f.text) : pulumi.output(f.text)));
  serialized.set(provider, text);
  return text;
}

/** The options with `names` added to the outputs kept secret (a kubeconfig, a key), whatever the caller asked. */
export function withSecretOutputs(
  opts: pulumi.CustomResourceOptions | undefined,
  ...names: string[]
): pulumi.CustomResourceOptions {
  return { ...opts, additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), ...names] };
}

/**
 * A Klutch resource whose CRUD is a `pulumi.dynamic.ResourceProvider`: the same constructor
 * arguments as `pulumi.dynamic.Resource` (provider, name, props, opts, module "klutch", kind).
 * Run as a dynamic resource it is exactly that one, type token and serialized provider included,
 * so existing stacks see no change; constructed inside the plugin it is `klutch:internal:<Kind>`,
 * aliased to the dynamic type so a stack made before moves over without a replacement.
 */
export abstract class KlutchResource extends pulumi.CustomResource {
  protected constructor(
    provider: pulumi.dynamic.ResourceProvider,
    name: string,
    props: pulumi.Inputs,
    opts: pulumi.CustomResourceOptions | undefined,
    // Always "klutch": kept so the arguments read as dynamic.Resource's.
    _module: typeof DYNAMIC_MODULE,
    kind: string,
  ) {
    if ("__provider" in props) throw new Error("A dynamic resource must not define the __provider key");
    const plugin = serving === "plugin";
    super(
      plugin ? internalType(kind) : dynamicType(kind),
      name,
      plugin ? props : { ...props, __provider: serializeProvider(provider) },
      plugin ? { ...opts, aliases: [...(opts?.aliases ?? []), { type: dynamicType(kind) }] } : opts,
    );
  }
}
