import * as pulumi from "@pulumi/pulumi";
import { KlutchResource, withSecretOutputs } from "../../providers/dynamic/klutch-resource";

/**
 * WireGuard key pairs as Pulumi resources. The pair is made once and kept in state:
 * every later `pulumi up` sees no diff, so peers never lose their sessions to a key they
 * did not ask for. Changing the `rotation` input replaces the resource, which makes a new
 * pair and, through the outputs, new configs on both ends.
 *
 * The private key is returned as an output (it has to live somewhere, and state is the
 * one place Pulumi encrypts) and marked secret with `additionalSecretOutputs`, so it is
 * stored encrypted and shows as [secret] in previews.
 *
 * Pulumi serializes a dynamic provider by capturing its functions' closures into the
 * state. The provider below therefore refers to nothing outside itself: each method
 * requires node:crypto at call time and the key helpers are methods of the same object,
 * so the serialized text is small and runs in the provider process without this project's
 * modules.
 */

export interface WireguardKeyPairInputs {
  rotation: string;
}

export interface WireguardKeyPairOutputs {
  rotation: string;
  publicKey: string;
  privateKey: string;
}

/** Extra helpers the provider's methods call through `this`; part of the serialized object. */
interface KeyProviderHelpers {
  generate(): { privateKey: string; publicKey: string };
  derive(privateKey: string): string;
}

type KeyProvider = pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs, WireguardKeyPairOutputs> &
  KeyProviderHelpers & {
    check: NonNullable<pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs>["check"]>;
    diff: NonNullable<
      pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs, WireguardKeyPairOutputs>["diff"]
    >;
    update: NonNullable<
      pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs, WireguardKeyPairOutputs>["update"]
    >;
    read: NonNullable<
      pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs, WireguardKeyPairOutputs>["read"]
    >;
    delete: NonNullable<
      pulumi.dynamic.ResourceProvider<WireguardKeyPairInputs, WireguardKeyPairOutputs>["delete"]
    >;
  };

export const wireguardKeyProvider: KeyProvider = {
  generate() {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("node:crypto") as typeof import("node:crypto");
    const { privateKey, publicKey } = crypto.generateKeyPairSync("x25519");
    // The raw 32-byte keys are the last 32 bytes of their PKCS#8 / SPKI DER encodings.
    const priv = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32);
    const pub = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    return { privateKey: priv.toString("base64"), publicKey: pub.toString("base64") };
  },

  derive(privateKey: string) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("node:crypto") as typeof import("node:crypto");
    const pkcs8 = Buffer.concat([
      Buffer.from("302e020100300506032b656e04220420", "hex"),
      Buffer.from(privateKey, "base64"),
    ]);
    const key = crypto.createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
    return crypto
      .createPublicKey(key)
      .export({ format: "der", type: "spki" })
      .subarray(-32)
      .toString("base64");
  },

  check(_olds, news) {
    const rotation: unknown = news.rotation ?? "initial";
    if (typeof rotation !== "string" || rotation === "") {
      return Promise.resolve({
        failures: [
          {
            property: "rotation",
            reason: "rotation must be a non-empty string; change it (e.g. to a date) to rotate the key pair",
          },
        ],
      });
    }
    return Promise.resolve({ inputs: { rotation } });
  },

  diff(_id, olds, news) {
    if (olds.rotation === news.rotation) return Promise.resolve({ changes: false });
    // A new pair must exist before configs switch to it; the old one is only state.
    return Promise.resolve({ changes: true, replaces: ["rotation"], deleteBeforeReplace: false });
  },

  create(inputs) {
    const pair = this.generate();
    return Promise.resolve({
      id: pair.publicKey,
      outs: { rotation: inputs.rotation, publicKey: pair.publicKey, privateKey: pair.privateKey },
    });
  },

  update(_id, olds, news) {
    // Only `rotation` is an input and changing it replaces; keep the pair whatever happens.
    return Promise.resolve({ outs: { ...olds, rotation: news.rotation } });
  },

  read(id, props) {
    if (!props || typeof props.privateKey !== "string") return Promise.resolve({ id, props });
    // The public key follows from the private key; recompute it so state cannot disagree.
    return Promise.resolve({ id, props: { ...props, publicKey: this.derive(props.privateKey) } });
  },

  delete() {
    // Nothing outside the state holds the keys.
    return Promise.resolve();
  },
};

export interface WireguardKeyPairArgs {
  /** Change this value to replace the pair with a new one; the default is "initial". */
  rotation?: pulumi.Input<string>;
}

/** A WireGuard key pair; `privateKey` is a secret output. */
export class WireguardKeyPair extends KlutchResource {
  // `declare`, not `!`: with ES2022 class fields a plain declaration would reset the
  // outputs the base constructor just set to undefined.
  declare public readonly publicKey: pulumi.Output<string>;
  declare public readonly privateKey: pulumi.Output<string>;
  declare public readonly rotation: pulumi.Output<string>;

  constructor(name: string, args: WireguardKeyPairArgs = {}, opts?: pulumi.CustomResourceOptions) {
    super(
      wireguardKeyProvider,
      name,
      { rotation: args.rotation ?? "initial", publicKey: undefined, privateKey: undefined },
      withSecretOutputs(opts, "privateKey"),
      "klutch",
      "WireguardKeyPair",
    );
  }
}
