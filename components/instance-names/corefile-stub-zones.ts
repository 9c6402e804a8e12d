import * as pulumi from "@pulumi/pulumi";
import {
  currentStubZones,
  stubZoneProblems,
  withStubZones,
  withoutStubZones,
} from "../../lib/instance-names/corefile";
import type { CompleteProvider } from "../../providers/dynamic/provider-type";
import { KlutchResource, withSecretOutputs } from "../../providers/dynamic/klutch-resource";
import { editCorefile, readCorefile, type CorefileLocation } from "./corefile-edit";
import { checkStubZones, type CorefileStubZonesInputs } from "./corefile-stub-zones-check";

/**
 * The stub zones of instance names in an app cluster's own DNS: Klutch's marked section in the
 * Corefile of CoreDNS's ConfigMap (kube-system/coredns as kubeadm and EKS deploy it), which
 * forwards the instance-name zones to Klutch's names server (lib/instance-names/corefile.ts says
 * how and why). The Corefile is someone else's, so this is a dynamic provider doing a guarded
 * read-modify-write (corefile-edit.ts): create and update write the section, refusing what CoreDNS
 * would refuse; delete takes it out and leaves the rest as it was; read reports the section's
 * zones as the cluster has them, so an add-on update that rewrote the Corefile shows as drift.
 *
 * Serialisation, as providers/dynamic/export-request.ts: the provider refers to this project's
 * modules through imports, which Pulumi's closure serializer copies by value (they import only pure
 * code at run time), and requires @kubernetes/client-node when it runs.
 *
 * The kubeconfig stays secret: the input is made secret, and the state, where delete and read need
 * it (the dynamic provider host hands them the outputs only), keeps it as a secret output. No
 * message quotes it, and the component exposes no output of it.
 */

export type { CorefileStubZonesInputs } from "./corefile-stub-zones-check";

/** What the state holds: the inputs as check made them. */
export type CorefileStubZonesOutputs = CorefileStubZonesInputs;

async function writeSection(inputs: CorefileStubZonesInputs): Promise<void> {
  await editCorefile(
    inputs,
    (text, where) => {
      const problems = stubZoneProblems(text, inputs.zones);
      if (problems.length > 0) throw new Error(`${where} was left unchanged: ${problems.join("; ")}`);
      return withStubZones(text, inputs.zones, inputs.serverAddress);
    },
    "fail",
  );
}

const removeSection = (at: CorefileLocation) => editCorefile(at, (text) => withoutStubZones(text), "skip");

const LOCATION_FIELDS = ["namespace", "configMap", "key"] as const;

const moved = (olds: CorefileLocation, news: CorefileLocation) =>
  LOCATION_FIELDS.some((field) => olds[field] !== news[field]);

export const corefileStubZonesProvider: CompleteProvider<
  CorefileStubZonesInputs,
  CorefileStubZonesOutputs,
  "check" | "diff" | "update" | "read" | "delete"
> = {
  check(_olds, news) {
    return Promise.resolve(checkStubZones(news));
  },

  diff(_id, olds, news) {
    const zones = (z: string[] | undefined) => JSON.stringify([...(z ?? [])].sort());
    const changed = [
      ...(zones(olds.zones) === zones(news.zones) ? [] : ["zones"]),
      ...(olds.serverAddress === news.serverAddress ? [] : ["serverAddress"]),
      ...LOCATION_FIELDS.filter((field) => olds[field] !== news[field]),
    ];
    // New credentials change nothing in the cluster, but the state must keep working ones for delete.
    const changes = changed.length > 0 || olds.kubeconfig !== news.kubeconfig;
    // Never a replacement: the section is updated in place, even when it moves (update says how).
    return Promise.resolve({ changes, replaces: [], deleteBeforeReplace: false });
  },

  async create(inputs) {
    await writeSection(inputs);
    return { id: `${inputs.namespace}/${inputs.configMap}/${inputs.key}`, outs: inputs };
  },

  async update(_id, olds, news) {
    await writeSection(news);
    // Moved to another ConfigMap or key: written at the new place first, so names never stop resolving.
    if (moved(olds, news)) await removeSection(olds);
    return { outs: news };
  },

  async read(id, props) {
    // Nothing of a state to go by (a bare `get`): nothing to read the cluster with.
    if (!props) return { id };
    const text = await readCorefile(props);
    const current = text === undefined ? undefined : currentStubZones(text);
    // No section (an add-on update rewrote the Corefile): no zones, so the next up writes it again.
    return {
      id,
      props: {
        ...props,
        zones: current?.zones ?? [],
        serverAddress: current?.serverAddress ?? props.serverAddress,
      },
    };
  },

  async delete(_id, props) {
    // No ConfigMap, no key or no section: nothing to undo.
    await removeSection(props);
  },
};

export interface CorefileStubZonesArgs {
  /** Admin kubeconfig of the app cluster; kept secret. */
  kubeconfig: pulumi.Input<string>;
  /** Where the cluster's CoreDNS reads its Corefile: kube-system/coredns, key Corefile by default. */
  namespace?: string;
  configMap?: string;
  key?: string;
  /** The instance-name zones, e.g. a9s-instances.svc.cluster.local, service.dc1.consul. */
  zones: pulumi.Input<string[]>;
  /** The names server's ClusterIP, optionally with a port. */
  serverAddress: pulumi.Input<string>;
}

/** Klutch's stub zones in the app cluster's Corefile (see above). */
export class CorefileStubZones extends KlutchResource {
  // `declare`, not `!`: ES2022 class fields would reset what the base constructor set.
  declare public readonly zones: pulumi.Output<string[]>;
  declare public readonly serverAddress: pulumi.Output<string>;
  declare public readonly namespace: pulumi.Output<string>;
  declare public readonly configMap: pulumi.Output<string>;

  constructor(name: string, args: CorefileStubZonesArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      corefileStubZonesProvider,
      name,
      {
        kubeconfig: pulumi.secret(args.kubeconfig),
        namespace: args.namespace ?? "kube-system",
        configMap: args.configMap ?? "coredns",
        key: args.key ?? "Corefile",
        zones: args.zones,
        serverAddress: args.serverAddress,
      },
      withSecretOutputs(opts, "kubeconfig"),
      "klutch",
      "CorefileStubZones",
    );
  }
}
