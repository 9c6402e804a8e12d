import {
  arrayOf,
  bool,
  obj,
  str,
  type Schema,
  type ValidationRule,
  immutable,
  mapOf,
} from "./schema-builders";

/**
 * Schemas of the Go types several bind kinds share. The v1alpha1 package carries
 * `+kubebuilder:validation:Optional`, so a field is required only where the Go type says
 * `+required`/`+kubebuilder:validation:Required`; omitempty does not matter there.
 */

/** A DNS subdomain or "" for the core group (GroupResource.group). */
export const GROUP_PATTERN = "^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$";
/** A lower-case plural resource name (GroupResource.resource). */
export const RESOURCE_PATTERN = "^[a-z][-a-z0-9]*[a-z0-9]$";

/** GroupResource, inlined into its users (`json:",inline"` / `json:","`). */
export function groupResourceProperties(): Record<string, Schema> {
  return {
    group: str({
      default: "",
      pattern: GROUP_PATTERN,
      description: 'API group of the resource; "" for the core group.',
    }),
    resource: str({ pattern: RESOURCE_PATTERN, description: "Plural resource name." }),
  };
}

export const groupResource = (): Schema => obj(groupResourceProperties(), ["resource"]);

/** Label or annotation key wildcard patterns (Matcher). */
const matchers = (): Schema => arrayOf(obj({ pattern: str() }));

function resourceSelector(): Schema {
  return obj(
    {
      // The Go type has a commented-out CEL rule for names/namespaces; only defaults apply.
      names: arrayOf(str(), { default: ["*"], description: 'Object names; "*" claims every name.' }),
      namespaces: arrayOf(str(), {
        default: ["*"],
        description: 'Namespaces; "*" means all. Set [] for cluster-scoped resources.',
      }),
      labelSelectors: arrayOf(mapOf(str())),
      fieldSelectors: arrayOf(str()),
      owner: str({ enum: ["Provider", "Consumer"], description: "Claim only objects owned by this side." }),
    },
    [],
    { default: {} },
  );
}

function permissionClaimProperties(): Record<string, Schema> {
  return {
    ...groupResourceProperties(),
    version: str({ minLength: 1, description: "Version of the claimed resource." }),
    selector: resourceSelector(),
    required: bool({ description: "Whether the binding fails when this claim is rejected." }),
    read: obj(
      {
        labels: matchers(),
        labelsOnProviderOwnedObjects: matchers(),
        annotations: matchers(),
        overrideAnnotations: matchers(),
      },
      [],
      { default: {} },
    ),
    create: obj({ replaceExisting: bool() }),
    autoAdopt: bool(),
    autoDonate: bool(),
    onConflict: obj({ recreateWhenConsumerSideDeleted: bool({ default: true }) }, [], { default: {} }),
    update: obj({
      fields: arrayOf(str()),
      preserving: arrayOf(str()),
      alwaysRecreate: bool(),
      labels: matchers(),
      labelsOnConsumerOwnedObjects: matchers(),
      annotations: matchers(),
      annotationsOnConsumerOwnedObjects: matchers(),
    }),
  };
}

const donateOrAdopt: ValidationRule = {
  rule: "!(has(self.autoDonate) && self.autoDonate && has(self.autoAdopt) && self.autoAdopt)",
  message: "donate and adopt are mutually exclusive",
};

/** PermissionClaim: objects of one GVR the provider asks to read or sync. */
export const permissionClaim = (): Schema =>
  obj(permissionClaimProperties(), ["resource", "version"], {
    "x-kubernetes-validations": [donateOrAdopt],
  });

/** AcceptablePermissionClaim: a PermissionClaim plus the consumer's decision. */
export const acceptablePermissionClaim = (): Schema =>
  obj(
    {
      ...permissionClaimProperties(),
      state: str({ enum: ["Accepted", "Rejected"], description: "The consumer's decision on the claim." }),
    },
    ["resource", "version", "state"],
    { "x-kubernetes-validations": [donateOrAdopt] },
  );

function localSecretKeyRefProperties(): Record<string, Schema> {
  return {
    name: str({ minLength: 1, description: "Name of the Secret." }),
    key: str({ enum: ["kubeconfig"], description: 'Key in the Secret; must be "kubeconfig".' }),
  };
}

/** LocalSecretKeyRef as a kubeconfigSecretRef: immutable once set. */
export const localKubeconfigSecretRef = (): Schema =>
  obj(localSecretKeyRefProperties(), ["name", "key"], immutable("kubeconfigSecretRef is immutable"));

/** ClusterSecretKeyRef (LocalSecretKeyRef + namespace) as a kubeconfigSecretRef: immutable once set. */
export const clusterKubeconfigSecretRef = (): Schema =>
  obj(
    {
      ...localSecretKeyRefProperties(),
      namespace: str({ minLength: 1, description: "Namespace of the Secret." }),
    },
    ["name", "key", "namespace"],
    immutable("kubeconfigSecretRef is immutable"),
  );

/** apiextensionsv1.CustomResourceDefinitionNames (kind and plural are required there). */
export const crdNames = (): Schema =>
  obj(
    {
      plural: str(),
      singular: str(),
      shortNames: arrayOf(str(), { "x-kubernetes-list-type": "atomic" }),
      kind: str(),
      listKind: str(),
      categories: arrayOf(str(), { "x-kubernetes-list-type": "atomic" }),
    },
    ["plural", "kind"],
  );
