import type * as pulumi from "@pulumi/pulumi";

/**
 * A dynamic provider whose optional methods named in `Methods` are implemented, so callers
 * (the tests, the bench) may call them without checking. A type only: erased before
 * Pulumi serializes the provider.
 */
export type CompleteProvider<
  Inputs,
  Outputs,
  Methods extends keyof pulumi.dynamic.ResourceProvider<Inputs, Outputs>,
> = pulumi.dynamic.ResourceProvider<Inputs, Outputs> &
  Required<Pick<pulumi.dynamic.ResourceProvider<Inputs, Outputs>, Methods>>;
