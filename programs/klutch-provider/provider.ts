import * as pulumi from "@pulumi/pulumi";
import type * as provider from "@pulumi/pulumi/provider";
import { KLUTCH_PACKAGE } from "./catalog";
import { CONSTRUCTORS } from "./constructors";
import { internalResources } from "./internal-resources";
import {
  type PackageSpec,
  UNKNOWN,
  inputProblems,
  isKnown,
  packageSchema,
} from "../../providers/kit/schema-model";

/** How the engine marks a value unknown during a preview (@pulumi/pulumi runtime/rpc). */
const UNKNOWN_SIG = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/**
 * The parts of an Output the provider reads to check inputs before anything is registered. Not
 * in @pulumi/pulumi's typings but what its own provider server uses on construct inputs
 * (sdk/nodejs/output.ts of v3.248.0: `promise(withUnknowns)` resolves to the value, with the
 * UNKNOWN marker where a value is not known yet).
 */
interface OutputInternals {
  promise(withUnknowns?: boolean): Promise<unknown>;
  isKnown: Promise<boolean>;
}

/** The value inside an input, every nested Output resolved; UNKNOWN where not known yet. */
async function resolveDeep(value: unknown): Promise<unknown> {
  // The engine's marker as a string, as the SDK's Unknown (rpc.ts deserializeProperty in a
  // preview), or as an output value without a value (specialOutputValueSig, isKnown false).
  if (value === UNKNOWN_SIG || pulumi.isUnknown(value)) return UNKNOWN;
  if (pulumi.Output.isInstance(value)) {
    const output = value as unknown as OutputInternals;
    const inner = await output.promise(true);
    // Not known, and no known parts inside: the whole value is still to come.
    if (inner === undefined && !(await output.isKnown)) return UNKNOWN;
    return resolveDeep(inner);
  }
  if (pulumi.Resource.isInstance(value)) return value;
  if (Array.isArray(value)) return Promise.all(value.map(resolveDeep));
  if (typeof value === "object" && value !== null)
    return Object.fromEntries(
      await Promise.all(Object.entries(value).map(async ([k, v]) => [k, await resolveDeep(v)] as const)),
    );
  return value;
}

/**
 * What a program's dependsOn means for a component: every resource under it waits. The engine
 * hands construct the program's dependencies as options.dependsOn, which the SDK applies to the
 * component alone (children do not inherit dependsOn); a transformation, which children do
 * inherit (@pulumi/pulumi v3.276.0 resource.ts: a resource takes its parent's transformations),
 * adds them to each child, so an export template waits for the bind CRDs it was made to wait for.
 */
function componentOptions(options: pulumi.ComponentResourceOptions): pulumi.ComponentResourceOptions {
  const deps = options.dependsOn;
  if (deps === undefined || (Array.isArray(deps) && deps.length === 0)) return options;
  const waitForDeps: pulumi.ResourceTransformation = (a) => ({
    props: a.props,
    opts: pulumi.mergeOptions(a.opts, { dependsOn: deps }),
  });
  return { ...options, transformations: [...(options.transformations ?? []), waitForDeps] };
}

function shortName(token: string): string {
  return token.split(":").pop() ?? token;
}

/**
 * The `klutch` component provider: serves the components of programs/klutch-provider/catalog.ts to programs
 * in any Pulumi language through `construct`. Before a component is made, its inputs are
 * checked against the same description schema.json was generated from; all problems go out
 * as one error naming each field. Plain inputs (`plain: true` in the schema) must be known
 * (they decide what is created); the others are handed to the component as they came, so
 * secrets stay Outputs marked secret and dependencies are kept. Each constructor also gets the
 * resolved values (UNKNOWN where not known yet) for its own checks.
 *
 * The custom resources those components make, `klutch:internal:*`, are served here too
 * (internal-resources.ts): the plugin needs nothing from the program's directory.
 */
export class KlutchProvider implements provider.Provider {
  public readonly version: string;
  private readonly schemaText: string;
  public readonly check = internalResources.check;
  public readonly diff = internalResources.diff;
  public readonly create = internalResources.create;
  public readonly read = internalResources.read;
  public readonly update = internalResources.update;
  public readonly delete = internalResources.delete;

  constructor(private readonly spec: PackageSpec = KLUTCH_PACKAGE) {
    this.version = spec.version;
    this.schemaText = JSON.stringify(packageSchema(spec));
  }

  getSchema(): Promise<string> {
    return Promise.resolve(this.schemaText);
  }

  async construct(
    name: string,
    type: string,
    inputs: pulumi.Inputs,
    options: pulumi.ComponentResourceOptions,
  ): Promise<provider.ConstructResult> {
    const component = this.spec.components.find((c) => c.token === type);
    const make = CONSTRUCTORS[type];
    if (!component || !make)
      throw new Error(
        `unknown component type ${type}; the klutch provider serves ${this.spec.components.map((c) => c.token).join(", ")}`,
      );
    const values: Record<string, unknown> = {};
    const args: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const [key, input] of Object.entries(inputs)) {
      const value = await resolveDeep(input);
      const plain = component.inputs[key]?.plain === true;
      values[key] = value;
      if (!isKnown(value) && plain)
        problems.push(`${key} must be known before the component is created (it decides what is created)`);
      args[key] = plain ? value : input;
    }
    problems.push(...inputProblems(this.spec, component.inputs, component.requiredInputs, values));
    if (problems.length > 0)
      throw new Error(`${shortName(type)} ${name}: invalid arguments:\n  - ${problems.join("\n  - ")}`);
    const made = await make(name, args, componentOptions(options), values);
    return { urn: made.resource.urn, state: made.outputs };
  }
}
