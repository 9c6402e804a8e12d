// Lint rules from the layer table in test/architecture/layers.cjs (npm run lint runs them).
"use strict";
const { LAYERS, OUTSIDE, IMPURE_MODULES, either, bands } = require("./test/architecture/layers.cjs");

const layerRules = LAYERS.map((layer, i) => {
  const { below, own, above } = bands(i);
  return {
    name: `layer-${layer.name}`,
    comment: `${layer.name} (${layer.holds}) imports only from itself and the layers below it: ${LAYERS.slice(
      0,
      i,
    )
      .map((l) => l.name)
      .join(", ")}`,
    severity: "error",
    from: { path: either(own), pathNot: [either(below), OUTSIDE] },
    // A `require` is always lazy here (ESLint refuses a top-level one); from a pure layer only a
    // spec's loaders of its own Pulumi side make one, which plugin-loaders keeps to exactly that.
    to: {
      path: either(above),
      pathNot: either([...below, ...own]),
      dependencyTypes: ["local"],
      dependencyTypesNot: ["require"],
    },
  };
});

const SPEC = "^network/([^/]+)/model/spec\\.ts$";
// What two implementations share goes to network/contract/ (pure) or network/shared/, so an
// implementation's folder stays the whole of it (test/e2e/plugin-seam.test.ts adds one so).
const IMPLEMENTATION_FOLDER = "^network/(?!contract/|shared/|plugins/)([^/]+)/";
const implementationRules = [
  {
    name: "implementations-apart",
    comment:
      "a network implementation imports no other implementation's folder: what two share belongs in network/contract/ or network/shared/",
    severity: "error",
    from: { path: IMPLEMENTATION_FOLDER, pathNot: OUTSIDE },
    to: { path: "^network/(?!contract/|shared/|plugins/)[^/]+/", pathNot: "^network/$1/" },
  },
  {
    name: "programs-through-specs",
    comment:
      "the programs (the bridge, the network preview, the klutch provider, …) reach an implementation only through its spec in network/registry.ts and the contract: what they need of it is a hook of network/contract/implementation.ts (a test may name one)",
    severity: "error",
    from: { path: "^programs/", pathNot: "\\.test\\.ts$" },
    to: { path: "^network/(?!contract/|shared/|plugins/)[^/]+/" },
  },
];

const pluginLoaderRules = [
  {
    name: "plugin-loaders",
    comment:
      "an implementation's spec lazily requires only its own folder's Pulumi side (network/<impl>/environment.ts, bridge-program.ts, provider/surface.ts, instance-backends.ts, path-health.ts, server-check.ts): see network/contract/implementation.ts `pulumi`",
    severity: "error",
    from: { path: SPEC },
    to: {
      dependencyTypes: ["require"],
      pathNot:
        "^network/$1/(environment\\.ts|bridge-program\\.ts|provider/surface\\.ts|instance-backends\\.ts|path-health\\.ts|server-check\\.ts)$",
    },
  },
];

/** Patterns of the impure and the pure layers at or below layer i (a module takes the first match). */
const impureBelow = (i) =>
  LAYERS.slice(0, i + 1)
    .filter((l) => !l.pure)
    .flatMap((l) => l.paths);
const pureBelow = (i) =>
  LAYERS.slice(0, i + 1)
    .filter((l) => l.pure)
    .flatMap((l) => l.paths);

const pureRules = LAYERS.flatMap((layer, i) => {
  if (!layer.pure) return [];
  const { below, own } = bands(i);
  return [
    {
      name: `pure-${layer.name}`,
      comment: `${layer.name} is pure: no Pulumi, Kubernetes client, processes, file system or network; pass the data in`,
      severity: "error",
      from: { path: either(own), pathNot: [either(below), OUTSIDE] },
      to: { path: IMPURE_MODULES, dependencyTypesNot: ["type-only"] },
    },
    {
      name: `pure-${layer.name}-imports-pure`,
      comment: `${layer.name} is pure, so what it imports is pure too: only modules of pure layers`,
      severity: "error",
      from: { path: either(own), pathNot: [either(below), OUTSIDE] },
      to: {
        path: either(impureBelow(i)),
        pathNot: either(pureBelow(i)),
        dependencyTypes: ["local"],
        dependencyTypesNot: ["type-only"],
      },
    },
  ];
});

// programs/composition-function/ stands outside the layers: its image holds that folder and its packages
// only (host/local-clusters/images/function-image.ts), and its tests check it against the compositions.
const FUNCTION_DIR = "^programs/composition-function/";
const compositionFunctionRules = [
  {
    name: "composition-function-self-contained",
    comment:
      "programs/composition-function/ imports only its own modules (and packages): its image holds nothing else",
    severity: "error",
    from: { path: FUNCTION_DIR, pathNot: OUTSIDE },
    to: { pathNot: FUNCTION_DIR, dependencyTypes: ["local"] },
  },
  {
    name: "composition-function-tests",
    comment:
      "programs/composition-function/'s tests import it and what they check it against: lib/, network/registry.ts and a8s's objects as the tests stand them in (test/helpers/a8s-stand-in.ts)",
    severity: "error",
    from: { path: `${FUNCTION_DIR}.*${OUTSIDE}` },
    to: {
      pathNot: [
        FUNCTION_DIR,
        "^lib/",
        "^network/registry\\.ts$",
        "^test/helpers/a8s-stand-in\\.ts$",
        "^test/helpers/kubectl\\.ts$",
      ],
      dependencyTypes: ["local"],
    },
  },
];

module.exports = {
  forbidden: [
    ...layerRules,
    ...pureRules,
    ...pluginLoaderRules,
    ...implementationRules,
    ...compositionFunctionRules,
    {
      name: "no-circular",
      comment: "modules that import each other through a chain: cut it where a lower part reaches up",
      severity: "error",
      from: { pathNot: OUTSIDE },
      to: { circular: true, dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // test/fixtures/direct-implementation is checked where it belongs, in a copy (test/e2e/plugin-seam.test.ts).
    exclude: {
      path: "(^|/)(node_modules|\\.klutch|\\.pulumi|bin)/|^(sdk|test/sdk|examples|test/fixtures/direct-implementation)/",
    },
    includeOnly: { path: "\\.ts$|^node_modules|^(node:)?[a-z_/]+$" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
  },
};
