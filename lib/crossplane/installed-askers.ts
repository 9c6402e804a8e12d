/**
 * Who asks whether Klutch can run on an installed Crossplane core (installed-crossplane.ts), and
 * so how its refusals name their settings and whose packages are its own: an environment (the
 * stack's `klutch:crossplane.*` settings, its label) or the provider's Crossplane component (its
 * own inputs, its name as a label). Pure.
 */

/** Where an environment needs the core: it puts provider-kubernetes' identity and the bind backend's templates there. */
export const INSTALLED_CROSSPLANE_NAMESPACE = "crossplane-system";

/** How a refusal names its settings and its installer. */
export interface InstalledCrossplaneAsker {
  /** A setting's path (`klutch:crossplane.useInstalled`, or the component's `useInstalled`). */
  path(key: string): string;
  /** A setting as a message names it (`crossplane.useInstalled`, or `useInstalled`). */
  setting(key: string): string;
  /** Who would install its own Crossplane instead ("this environment"). */
  installer: string;
  /** Where the core must run, and why there. */
  namespace: string;
  namespaceReason: string;
}

/** An environment's: the stack's settings, crossplane-system. */
export const ENVIRONMENT_ASKER: InstalledCrossplaneAsker = {
  path: (key) => `klutch:crossplane.${key}`,
  setting: (key) => `crossplane.${key}`,
  installer: "this environment",
  namespace: INSTALLED_CROSSPLANE_NAMESPACE,
  namespaceReason: "Klutch places provider-kubernetes' identity and the bind backend's templates",
};

/** The provider's Crossplane component's: its own inputs, its `namespace`. */
export function componentAsker(namespace: string): InstalledCrossplaneAsker {
  return {
    path: (key) => key,
    setting: (key) => key,
    installer: "this component",
    namespace,
    namespaceReason: "this component places provider-kubernetes' identity and the ProviderConfigs' Secrets",
  };
}

/** Whose packages are not foreign: those carrying `label: value`, as its own are made. */
export interface PackageOwner {
  controlPlane: string;
  label: string;
  value: string;
  /** Who made its own, and who would install them, in messages. */
  who: string;
  installer: string;
  path: string;
  comesWith: string;
}

/** The label the provider's Crossplane component puts on its packages on an installed core: its name. */
export const COMPONENT_OWNER_LABEL = "klutch.anynines.com/crossplane";

/** The component `name`'s ownership of packages on an installed core. */
export function componentPackageOwner(name: string, controlPlane: string): PackageOwner {
  return {
    controlPlane,
    label: COMPONENT_OWNER_LABEL,
    value: name,
    who: `the Crossplane component ${name}`,
    installer: "it",
    path: "useInstalled",
    comesWith: "the component",
  };
}
