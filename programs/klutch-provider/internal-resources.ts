import type * as pulumi from "@pulumi/pulumi";
import type * as provider from "@pulumi/pulumi/provider";
import { crossplaneUpgradeGuardProvider } from "../../providers/dynamic/crossplane-upgrade-guard";
import { crossplaneWebhooksProvider } from "../../providers/dynamic/crossplane-webhooks";
import { exportRequestProvider } from "../../providers/dynamic/export-request";
import { internalType } from "../../providers/dynamic/klutch-resource";
import { packagePauseProvider } from "../../providers/dynamic/package-pause";
import { packagePushProvider } from "../../providers/dynamic/package-push";
import { randomKeyProvider } from "../../providers/dynamic/random-key";
import { teardownDrainProvider } from "../../providers/dynamic/teardown-drain";
import { withClientReasons } from "../../providers/dynamic/client-reasons";
import { connectivityProbeProvider } from "../../network/shared/connectivity-probe";
import { corefileStubZonesProvider } from "../../components/instance-names/corefile-stub-zones";
import { IMPLEMENTATIONS } from "../../network/registry";
import { rewrap, union, unwrap } from "../../lib/provider/wire-props";

type AnyProvider = pulumi.dynamic.ResourceProvider;

/**
 * Every `KlutchResource` kind the plugin serves as `klutch:internal:<Kind>`: the shared ones and
 * each registered implementation's (its provider surface's `resources`).
 */
export const INTERNAL_RESOURCES: Record<string, AnyProvider> = {
  RandomKey: randomKeyProvider as AnyProvider,
  ExportRequest: exportRequestProvider as AnyProvider,
  TeardownDrain: teardownDrainProvider as AnyProvider,
  CrossplaneWebhookConfigurations: crossplaneWebhooksProvider as AnyProvider,
  ConnectivityProbe: connectivityProbeProvider as AnyProvider,
  PackagePush: packagePushProvider as AnyProvider,
  PackagePause: packagePauseProvider as AnyProvider,
  CrossplaneUpgradeGuard: crossplaneUpgradeGuardProvider as AnyProvider,
  CorefileStubZones: corefileStubZonesProvider as AnyProvider,
  ...(Object.assign({}, ...IMPLEMENTATIONS.map((i) => i.pulumi.provider?.().resources ?? {})) as Record<
    string,
    AnyProvider
  >),
};

const PREFIX = internalType("");

/** The kind of a `klutch:internal:<Kind>` URN (the last `$`-part of its type, nested under its parents), or undefined. */
export function internalKind(urn: string): string | undefined {
  const type = urn.split("::")[2]?.split("$").pop();
  return type?.startsWith(PREFIX) ? type.slice(PREFIX.length) : undefined;
}

function providerOf(urn: string): AnyProvider {
  const kind = internalKind(urn);
  const found = kind === undefined ? undefined : INTERNAL_RESOURCES[kind];
  if (!found)
    throw new Error(
      `unknown resource type in ${urn}; the klutch plugin serves ${Object.keys(INTERNAL_RESOURCES)
        .map(internalType)
        .join(", ")}`,
    );
  return withClientReasons(found);
}

type Props = Record<string, unknown>;

/**
 * The CRUD of `klutch:internal:*` resources, each call handed to the kind's dynamic provider as
 * the engine's dynamic-provider host would (@pulumi/pulumi cmd/dynamic-provider/index.ts of
 * v3.276.0): secrets revealed (lib/provider/wire-props.ts), a missing check passes the inputs
 * through, a missing diff leaves the diff to the engine, a missing read returns the state as it is.
 */
export const internalResources: Required<
  Pick<provider.Provider, "check" | "diff" | "create" | "read" | "update" | "delete">
> = {
  async check(urn, olds: Props, news: Props) {
    const p = providerOf(urn);
    if (!p.check) return { inputs: news };
    const n = unwrap(news);
    const result = await p.check(unwrap(olds).plain, n.plain);
    return {
      inputs: rewrap(result.inputs as Props | undefined, n.secretKeys),
      failures: result.failures,
    };
  },

  async diff(id, urn, olds: Props, news: Props) {
    const p = providerOf(urn);
    if (!p.diff) return {};
    return p.diff(id, unwrap(olds).plain, unwrap(news).plain);
  },

  async create(urn, inputs: Props) {
    const n = unwrap(inputs);
    const result = await providerOf(urn).create(n.plain);
    return { id: result.id, outs: rewrap(result.outs as Props | undefined, n.secretKeys) };
  },

  async read(id, urn, props: Props) {
    const p = providerOf(urn);
    const s = unwrap(props);
    if (!p.read) return { id, props: rewrap(s.plain, s.secretKeys) };
    const result = await p.read(id, s.plain);
    return {
      id: result.id ?? id,
      props: rewrap(result.props as Props | undefined, s.secretKeys),
      ...(result.inputs ? { inputs: rewrap(result.inputs as Props, s.secretKeys) } : {}),
    };
  },

  async update(id, urn, olds: Props, news: Props) {
    const p = providerOf(urn);
    const o = unwrap(olds);
    const n = unwrap(news);
    const secrets = union(o.secretKeys, n.secretKeys);
    // Without an update the dynamic host returned no outputs; the old ones are what still holds.
    if (!p.update) return { outs: rewrap(o.plain, secrets) };
    const result = await p.update(id, o.plain, n.plain);
    return { outs: rewrap(result.outs as Props | undefined, secrets) };
  },

  async delete(id, urn, props: Props) {
    const p = providerOf(urn);
    if (p.delete) await p.delete(id, unwrap(props).plain);
  },
};
