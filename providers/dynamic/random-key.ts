import * as pulumi from "@pulumi/pulumi";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource, withSecretOutputs } from "./klutch-resource";

/**
 * Random keys as Pulumi resources: cookie signing and encryption keys, OAuth client
 * secrets. The bytes come from node:crypto's CSPRNG, are made once and kept (encrypted)
 * in state, so every later `pulumi up` sees no diff and sessions signed with the key stay
 * valid. Changing `length` or `rotation` replaces the key.
 *
 * As with the WireGuard key provider, the serialized provider refers to nothing outside
 * itself, so it runs in the provider process without this project's modules.
 */

export type RandomKeyEncoding = "base64" | "base64url" | "hex";

export interface RandomKeyInputs {
  /** Number of random bytes (before encoding). */
  length: number;
  encoding: RandomKeyEncoding;
  rotation: string;
}

export interface RandomKeyOutputs extends RandomKeyInputs {
  value: string;
}

export const randomKeyProvider: CompleteProvider<
  RandomKeyInputs,
  RandomKeyOutputs,
  "check" | "diff" | "update" | "delete"
> = {
  check(_olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    const length: unknown = news.length;
    const encoding: unknown = news.encoding ?? "base64";
    const rotation: unknown = news.rotation ?? "initial";
    if (typeof length !== "number" || !Number.isInteger(length) || length < 16 || length > 1024) {
      failures.push({ property: "length", reason: "length must be a whole number of bytes from 16 to 1024" });
    }
    if (encoding !== "base64" && encoding !== "base64url" && encoding !== "hex") {
      failures.push({ property: "encoding", reason: "encoding must be base64, base64url or hex" });
    }
    if (typeof rotation !== "string" || rotation === "") {
      failures.push({
        property: "rotation",
        reason: "rotation must be a non-empty string; change it (e.g. to a date) to make a new key",
      });
    }
    if (failures.length > 0) return Promise.resolve({ failures });
    return Promise.resolve({
      inputs: {
        length: length as number,
        encoding: encoding as RandomKeyEncoding,
        rotation: rotation as string,
      },
    });
  },

  diff(_id, olds, news) {
    const replaces = (["length", "encoding", "rotation"] as const).filter((k) => olds[k] !== news[k]);
    if (replaces.length === 0) return Promise.resolve({ changes: false });
    // The new key must exist before the consumers of the old one are updated.
    return Promise.resolve({ changes: true, replaces: [...replaces], deleteBeforeReplace: false });
  },

  create(inputs) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("node:crypto") as typeof import("node:crypto");
    const value = crypto.randomBytes(inputs.length).toString(inputs.encoding);
    // The id is in plain state: it must say nothing about the key.
    return Promise.resolve({ id: crypto.randomUUID(), outs: { ...inputs, value } });
  },

  update(_id, olds, news) {
    // Every input replaces; nothing to change in place.
    return Promise.resolve({ outs: { ...olds, ...news, value: olds.value } });
  },

  delete() {
    // The key lives only in state.
    return Promise.resolve();
  },
};

export interface RandomKeyArgs {
  /** Number of random bytes, before encoding. */
  length: pulumi.Input<number>;
  /** How the bytes are written; base64 by default. */
  encoding?: pulumi.Input<RandomKeyEncoding>;
  /** Change this value to make a new key; "initial" by default. */
  rotation?: pulumi.Input<string>;
}

/** A random key; `value` is a secret output. */
export class RandomKey extends KlutchResource {
  // `declare`, not `!`: a class field would reset the outputs the base constructor set.
  declare public readonly value: pulumi.Output<string>;
  declare public readonly length: pulumi.Output<number>;
  declare public readonly encoding: pulumi.Output<RandomKeyEncoding>;

  constructor(name: string, args: RandomKeyArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      randomKeyProvider,
      name,
      {
        length: args.length,
        encoding: args.encoding ?? "base64",
        rotation: args.rotation ?? "initial",
        value: undefined,
      },
      withSecretOutputs(opts, "value"),
      "klutch",
      "RandomKey",
    );
  }
}
