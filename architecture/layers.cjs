// The project's layers, bottom to top, written down once. .dependency-cruiser.cjs turns them
// into lint rules (npm run lint): a module imports only from its own layer and the layers below
// it, and a pure layer loads no Pulumi, no Kubernetes client, no processes, no file system and no
// network. A module belongs to the first layer, from the bottom, whose pattern matches its
// repository-relative path, so a narrower folder (network/<impl>/model/) is listed below the
// wider one it sits in (network/<impl>/). architecture/layers.test.ts checks the same graph for
// import cycles between folders.
"use strict";

/** @type {{ name: string; pure?: boolean; paths: string[]; holds: string }[]} */
const LAYERS = [
  {
    name: "core",
    pure: true,
    paths: ["^lib/"],
    holds: "decisions and renderings over plain data that know no network implementation",
  },
  {
    name: "host",
    paths: ["^automation/", "^local-clusters/"],
    holds: "the toolchain's paths, stack files, the Pulumi runner, local clusters as processes",
  },
  {
    name: "dynamic-providers",
    paths: ["^dynamic-providers/"],
    holds: "dynamic providers several parts share",
  },
  {
    name: "clusters",
    paths: ["^components/clusters/"],
    holds: "the cluster components and identities every part builds on",
  },
  {
    name: "provider-kit",
    paths: ["^provider-kit/"],
    holds:
      "what the klutch provider's surface is made of: its schema model, property helpers and constructor checks",
  },
  {
    name: "connector-contract",
    pure: true,
    paths: ["^network/contract/"],
    holds: "what a network implementation declares, and the connector API's names",
  },
  {
    name: "connector-runtime",
    paths: ["^network/shared/"],
    holds: "what several implementations run: the connectivity probe, the routed bridge program",
  },
  {
    name: "implementation-models",
    pure: true,
    paths: ["^network/(?!plugins/)[^/]+/model/"],
    holds: "each implementation's config schema, checks, planners and renderers",
  },
  {
    name: "implementations",
    paths: ["^network/(?!plugins/)[^/]+/"],
    holds: "each implementation's components, bridge program and provider surface",
  },
  {
    name: "registry",
    pure: true,
    paths: ["^network/[^/]+$"],
    holds: "the implementations, once",
  },
  {
    name: "config",
    pure: true,
    paths: ["^config/"],
    holds: "the stack config as the registered implementations make it, and its validation",
  },
  {
    name: "connector-assembly",
    paths: ["^network/plugins/"],
    holds: "what the environment and the bridge build per implementation, from the registry",
  },
  {
    name: "preview-model",
    pure: true,
    paths: ["^network-preview/plan/"],
    holds: "the network preview's planning: which groups a change touches, where they run, what they become",
  },
  {
    name: "environment-model",
    pure: true,
    paths: ["^components/plan/"],
    holds: "the environment's plan: what each of its parts builds, decided from the config alone",
  },
  {
    name: "components",
    paths: ["^components/"],
    holds: "Pulumi components: Crossplane, bind, the bridge Deployment, the environment",
  },
  {
    name: "entry-points",
    paths: [
      "^[^/]+$",
      "^bridge/",
      "^provider/",
      "^network-preview/",
      "^scripts/",
      "^policy/",
      "^architecture/",
    ],
    holds: "the program, the provider, the bridge, the network preview, the commands",
  },
  { name: "tests", paths: ["^test/"], holds: "e2e and data-plane tests, their helpers, benchmarks" },
];

/** Modules outside the layering: every test may import what it tests. */
const OUTSIDE = "\\.test\\.ts$";

/** Runtime modules a pure layer never loads (a type-only import is erased and allowed). */
const IMPURE_MODULES = [
  "^(node:)?(fs|fs/promises|child_process|net|http|https|http2|tls|dgram|dns|worker_threads|cluster|os)$",
  "^node_modules/@pulumi/",
  // Process metrics read /proc. The Kubernetes client stays allowed for its KubeConfig parser
  // (lib/kube/flatten.ts, config/validate.ts): no rule at import level tells that apart from
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
