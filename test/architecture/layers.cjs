// The project's layers, bottom to top, written down once. .dependency-cruiser.cjs turns them
// into lint rules (npm run lint): a module imports only from its own layer and the layers below
// it, and a pure layer loads no Pulumi, no Kubernetes client, no processes, no file system and no
// network. Each top-level folder is one band of layers, in the order of the tree's bands below, so a
// folder's place in this list tells what it may import; where a band has inner layers, they are its
// subfolders, listed bottom to top. A module belongs to the first layer, from the bottom, whose
// pattern matches its repository-relative path, so a narrower folder (network/<impl>/model/) is
// listed below the wider one it sits in (network/<impl>/). test/architecture/layers.test.ts checks
// the same graph for import cycles between folders.
"use strict";

/** @type {{ band: string; name: string; pure?: boolean; paths: string[]; holds: string }[]} */
const LAYERS = [
  {
    band: "lib",
    name: "core",
    pure: true,
    paths: ["^lib/"],
    holds: "decisions and renderings over plain data that know no network implementation",
  },
  {
    band: "host",
    name: "host",
    paths: ["^host/"],
    holds:
      "the local machinery: the toolchain, the Pulumi runner and stack files, local clusters as processes",
  },
  {
    band: "providers",
    name: "providers",
    paths: ["^providers/"],
    holds:
      "the dynamic providers the components and the bridge use, and the kit the klutch provider's surface is made of",
  },
  {
    band: "clusters",
    name: "clusters",
    paths: ["^clusters/"],
    holds: "the cluster components (local, existing, AWS EKS, OpenStack) and identities every part builds on",
  },
  {
    band: "network",
    name: "connector-contract",
    pure: true,
    paths: ["^network/contract/"],
    holds: "what a network implementation declares, and the connector API's names",
  },
  {
    band: "network",
    name: "connector-runtime",
    paths: ["^network/shared/"],
    holds: "what several implementations run: the connectivity probe, the routed bridge program",
  },
  {
    band: "network",
    name: "implementation-models",
    pure: true,
    paths: ["^network/(?!plugins/)[^/]+/model/"],
    holds: "each implementation's config schema, checks, planners and renderers",
  },
  {
    band: "network",
    name: "implementations",
    paths: ["^network/(?!plugins/)[^/]+/"],
    holds: "each implementation's components, bridge program and provider surface",
  },
  {
    band: "network",
    name: "registry",
    pure: true,
    paths: ["^network/[^/]+$"],
    holds: "the implementations, once",
  },
  {
    band: "network",
    name: "connector-assembly",
    paths: ["^network/plugins/"],
    holds: "what the environment and the bridge build per implementation, from the registry",
  },
  {
    band: "components",
    name: "config",
    pure: true,
    paths: ["^components/config/"],
    holds: "the stack config as the registered implementations make it, and its validation",
  },
  {
    band: "components",
    name: "environment-model",
    pure: true,
    paths: ["^components/plan/"],
    holds: "the environment's plan: what each of its parts builds, decided from the config alone",
  },
  {
    band: "components",
    name: "components",
    paths: ["^components/"],
    holds: "Pulumi components: Crossplane, bind, the data services, the bridge Deployment, the environment",
  },
  {
    band: "programs",
    name: "preview-model",
    pure: true,
    paths: ["^programs/network-preview/plan/"],
    holds: "the network preview's planning: which groups a change touches, where they run, what they become",
  },
  {
    band: "programs",
    name: "programs",
    paths: ["^[^/]+$", "^programs/"],
    holds:
      "what runs on its own: the stack program, the klutch provider, the bridge, the network preview, the policy pack, the commands",
  },
  {
    band: "test",
    name: "tests",
    paths: ["^test/"],
    holds: "e2e and data-plane tests, their helpers, benchmarks, the architecture's checks",
  },
];

/** Modules outside the layering: every test may import what it tests. */
const OUTSIDE = "\\.test\\.ts$";

/** Runtime modules a pure layer never loads (a type-only import is erased and allowed). */
const IMPURE_MODULES = [
  "^(node:)?(fs|fs/promises|child_process|net|http|https|http2|tls|dgram|dns|worker_threads|cluster|os)$",
  "^node_modules/@pulumi/",
  // Process metrics read /proc. The Kubernetes client stays allowed for its KubeConfig parser
  // (lib/kube/flatten.ts, components/config/validate.ts): no rule at import level tells that apart from
  // its API clients, which only the host, components and entry points call.
  "^node_modules/prom-client/",
];

const either = (patterns) => (patterns.length ? `(${patterns.join("|")})` : "^$");

/** The patterns of the layers below layer i, of layer i, and above it. */
function bands(i) {
  return {
    below: LAYERS.slice(0, i).flatMap((l) => l.paths),
    own: LAYERS[i].paths,
    above: LAYERS.slice(i + 1).flatMap((l) => l.paths),
  };
}

module.exports = { LAYERS, OUTSIDE, IMPURE_MODULES, either, bands };
