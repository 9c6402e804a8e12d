import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import { crdNames, permissionClaim } from "./bind-types";
import {
  ageColumn,
  arrayOf,
  bool,
  conditions,
  freeForm,
  immutable,
  int32,
  obj,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
  type Extra,
  type Schema,
} from "./schema-builders";

const scope = (description: string, extra: Extra = {}): Schema =>
  str({ enum: ["Cluster", "Namespaced"], description, ...extra });

/** APIServiceExportVersion: a CRD version without webhooks or conversion. */
function exportVersion(): Schema {
  return obj(
    {
      name: str({
        minLength: 1,
        pattern: "^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$",
        description: "e.g. v1, v2beta1",
      }),
      served: bool({ default: true }),
      storage: bool({ description: "Exactly one version is stored." }),
      deprecated: bool(),
      deprecationWarning: str(),
      schema: obj(
        {
          // The exported CRD's own schema: taken as a whole, never pruned or merged.
          openAPIV3Schema: freeForm({ "x-kubernetes-map-type": "atomic" }),
        },
        ["openAPIV3Schema"],
      ),
      subresources: obj({
        // CustomResourceSubresourceStatus is an empty struct: `status: {}` switches it on.
        status: obj({}),
        scale: obj({ specReplicasPath: str(), statusReplicasPath: str(), labelSelectorPath: str() }, [
          "specReplicasPath",
          "statusReplicasPath",
        ]),
      }),
      additionalPrinterColumns: arrayOf(
        obj(
          { name: str(), type: str(), format: str(), description: str(), priority: int32(), jsonPath: str() },
          ["name", "type", "jsonPath"],
        ),
        { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"] },
      ),
    },
    ["name", "served", "storage", "schema"],
  );
}

/**
 * APIServiceExport: the snapshot of a provider CRD that the konnector installs in the
 * consumer cluster (a CRD spec without webhooks), plus the permission claims and how the
 * konnector watches it. Its status mirrors the consumer-side CRD.
 */
export function apiServiceExportCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      group: str({ description: 'API group of the exported resource; "" is the core group.' }),
      names: crdNames(),
      scope: scope("Scope of the exported resource."),
      versions: arrayOf(exportVersion(), {
        minItems: 1,
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
      }),
      permissionClaims: arrayOf(permissionClaim()),
      informerScope: scope(
        "Whether the konnector watches the whole cluster or single namespaces.",
        immutable("informerScope is immutable"),
      ),
      clusterScopedIsolation: str({
        enum: ["Prefixed", "Namespaced", "None"],
        description: "How cluster-scoped objects of several consumers are kept apart on the provider side.",
      }),
    },
    ["group", "names", "scope", "versions", "informerScope"],
    {
      "x-kubernetes-validations": [
        {
          rule: 'self.scope == "Namespaced" || self.informerScope == "Cluster"',
          message: "informerScope must be Cluster for cluster-scoped resources",
        },
        {
          rule: 'self.scope == "Namespaced" || has(self.clusterScopedIsolation)',
          message: "clusterScopedIsolation must be defined for cluster-scoped resources",
        },
        {
          rule: 'self.scope == "Cluster" || !has(self.clusterScopedIsolation)',
          message: "clusterScopedIsolation is not relevant for namespaced resources",
        },
      ],
    },
  );
  const status = obj({
    acceptedNames: crdNames(),
    storedVersions: arrayOf(str()),
    conditions: conditions(),
  });
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("apiServiceExport"),
    schema: rootSchema({
      spec,
      status,
      specRequired: true,
      rules: [
        {
          rule: 'self.metadata.name == self.spec.names.plural+"."+self.spec.group',
          // Upstream's marker reuses "informerScope is immutable" for this rule. The konnector
          // and backend never read it, but the CRD must equal the release's field for field
          // (nothing rewrites it, yet a user diffing against upstream should see no change).
          message: "informerScope is immutable",
        },
      ],
    }),
    printerColumns: [
      {
        name: "Established",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Established")].status',
        priority: 5,
      },
      ageColumn,
    ],
    labels,
  });
}
