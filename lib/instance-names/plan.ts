import * as path from "node:path";
import type { AddIssue, Located } from "../config/located";
import { formatPath } from "../config/messages";
import {
  DEFAULT_NAMES_COREDNS_IMAGE,
  type AppClusterConfig,
  type InstanceNamesConfig,
} from "../config/schema";
import { readNodeImages } from "../local/node-state";
import { PUBLISHED_BRIDGE_IMAGE } from "../bridge/bridge-plan";

/**
 * Where each app cluster's instance-names server runs, and from which images, decided from the
 * config and the local nodes' image lists (docs/data-services.md, "TLS that verifies the server's
 * name"). Pure but for `readFile`, which the caller gives.
 *
 * The names an app cluster answers are the instances' own, so a zone must never take over the
 * cluster's own names: not `cluster.local`, nor a zone above it, nor `svc.cluster.local`. A
 * namespace's zone below it (`<ns>.svc.cluster.local`, as the local stack's a9s stand-in names
 * its instances) is allowed: it shadows only an app-cluster namespace of the same name.
 */
export interface InstanceNamesServer {
  cluster: string;
  zones: string[];
  /** The watcher's image (the bridge image holds it) and CoreDNS's. */
  image: string;
  corednsImage: string;
  imagePullPolicy: "Never" | "IfNotPresent";
}

export interface InstanceNamesPlanInput {
  appClusters: Located<AppClusterConfig>[];
  names: InstanceNamesConfig;
  /** The bridge's image setting, which the watcher shares by default. */
  bridgeImage?: string;
  localStateDir: string;
  readFile: (file: string) => string;
}

/** The app clusters' own domain (every cluster here keeps kubeadm's default). */
const CLUSTER_DOMAIN = "cluster.local";
const SERVICES_ZONE = `svc.${CLUSTER_DOMAIN}`;

function zoneProblem(zone: string): string | undefined {
  if (zone === SERVICES_ZONE || zone === CLUSTER_DOMAIN || CLUSTER_DOMAIN.endsWith(`.${zone}`))
    return `"${zone}" would take over the app clusters' own names (${CLUSTER_DOMAIN}); name the instances' zone, such as a9s's Consul domain (service.dc1.consul), or one namespace's (<namespace>.${SERVICES_ZONE})`;
  return undefined;
}

export function planInstanceNames(input: InstanceNamesPlanInput, add: AddIssue): InstanceNamesServer[] {
  const zones = input.names.zones;
  if (zones.length === 0) return [];
  let problems = 0;
  const problem = (at: (string | number)[], message: string) => {
    problems++;
    add(at, message);
  };
  zones.forEach((zone, i) => {
    const bad = zoneProblem(zone);
    if (bad) problem(["instanceNames", "zones", i], bad);
    else if (zones.indexOf(zone) !== i)
      problem(
        ["instanceNames", "zones", i],
        `"${zone}" is listed twice (also at index ${zones.indexOf(zone)})`,
      );
  });
  const servers = input.appClusters.flatMap((app) => {
    const server = serverOf(app, input, problem);
    return server ? [server] : [];
  });
  return problems > 0 ? [] : servers;
}

function serverOf(app: Located<AppClusterConfig>, input: InstanceNamesPlanInput, problem: AddIssue) {
  const { value: cluster, at } = app;
  const zones = [...input.names.zones];
  if (cluster.infrastructure !== "local")
    return {
      cluster: cluster.name,
      zones,
      image: input.names.image ?? input.bridgeImage ?? PUBLISHED_BRIDGE_IMAGE,
      corednsImage: input.names.corednsImage ?? DEFAULT_NAMES_COREDNS_IMAGE,
      imagePullPolicy: "IfNotPresent" as const,
    };
  if ((cluster.nodes ?? 0) === 0) {
    problem(
      [...at, "nodes"],
      `is 0, but instanceNames.zones needs a names server in every app cluster, and "${cluster.name}" cannot run its pod: set ${formatPath([...at, "nodes"])} to 1, or remove instanceNames.zones`,
    );
    return undefined;
  }
  const read = readNodeImages(path.join(input.localStateDir, cluster.name), input.readFile);
  if (!read.ok) {
    problem(
      [...at, "nodes"],
      `the node of "${cluster.name}" has no image list (${read.problem}), so its names server has no image: start it with \`npm run clusters -- up\`, then run again`,
    );
    return undefined;
  }
  const held = Object.values(read.images);
  const pick = (setting: "image" | "corednsImage", own: string | undefined) => {
    const chosen = input.names[setting] ?? own;
    if (chosen && held.includes(chosen)) return chosen;
    problem(
      ["instanceNames", setting],
      `${chosen ? `"${chosen}" is not an image` : "no image is one"} the node of "${cluster.name}" holds, and a local node pulls nothing (${read.file} lists ${held.join(", ") || "none"}): ${chosen ? `remove instanceNames.${setting}` : "restart it with `npm run clusters -- up`"}`,
    );
    return undefined;
  };
  const image = pick("image", read.images.bridge);
  const corednsImage = pick("corednsImage", read.images.coredns);
  if (!image || !corednsImage) return undefined;
  return { cluster: cluster.name, zones, image, corednsImage, imagePullPolicy: "Never" as const };
}
