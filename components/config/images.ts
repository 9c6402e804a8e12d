import { releaseImages } from "../../lib/bind/upstream/release";
import { PUBLISHED_BRIDGE_IMAGE } from "../../lib/bridge/bridge-plan";
import { DEFAULT_DEX_IMAGE, DEFAULT_NAMES_COREDNS_IMAGE, DEFAULT_PACKAGES } from "../../lib/config/schema";
import { mirroredImage } from "../../lib/images/mirror";
import { DEFAULT_HAPROXY_IMAGE } from "../../network/proxy/model/images";
import type { EnvironmentConfig } from "./schema";

/**
 * The config with `imageRegistry` applied: each image and package of the environment that no
 * setting names (a default left in place) is the mirror's copy of that default, so every
 * component, the bridge's flags and the Crossplane packages read it as if the operator had named
 * it. A named one stays as named. Crossplane core's image and WireGuard's, which have no default
 * in the config, follow the mirror where they are deployed (components/environment.ts,
 * network/wireguard/environment.ts). Pure.
 */
export function withImageRegistry(config: EnvironmentConfig): EnvironmentConfig {
  const mirror = config.imageRegistry;
  if (!mirror) return config;
  const moved = (ref: string) => mirroredImage(ref, mirror);
  const release = releaseImages(config.bind.version);
  const xp = config.crossplane;
  const pkg = (key: keyof typeof DEFAULT_PACKAGES) =>
    xp[key] === DEFAULT_PACKAGES[key] ? moved(DEFAULT_PACKAGES[key]) : xp[key];
  return {
    ...config,
    oidc:
      config.oidc.provider === "dex" && config.oidc.image === DEFAULT_DEX_IMAGE
        ? { ...config.oidc, image: moved(DEFAULT_DEX_IMAGE) }
        : config.oidc,
    bind: {
      ...config.bind,
      image: config.bind.image ?? moved(release.backend),
      konnectorImage: config.bind.konnectorImage ?? moved(release.konnector),
    },
    bridge: {
      ...config.bridge,
      image: config.bridge.image ?? moved(PUBLISHED_BRIDGE_IMAGE),
      proxyImage: config.bridge.proxyImage ?? moved(DEFAULT_HAPROXY_IMAGE),
    },
    instanceNames: {
      ...config.instanceNames,
      corednsImage: config.instanceNames.corednsImage ?? moved(DEFAULT_NAMES_COREDNS_IMAGE),
    },
    crossplane: {
      ...xp,
      providerKubernetes: pkg("providerKubernetes"),
      providerAnynines: pkg("providerAnynines"),
      functionPatchAndTransform: pkg("functionPatchAndTransform"),
      dataservicesConfiguration: pkg("dataservicesConfiguration"),
    },
  };
}
