import { DEFAULT_PACKAGES } from "../../lib/config/schema";
import { mirroredImage, repositoryAndTag, splitRegistry } from "../../lib/images/mirror";
import type { EnvironmentConfig } from "../config/schema";

/** The chart's image of Crossplane core (crossplane 1.20.11 and 2.4.0 `values.yaml`), at `v<version>`. */
const CROSSPLANE_IMAGE_REPOSITORY = "xpkg.crossplane.io/crossplane/crossplane";

/**
 * Crossplane core's image and the package mirror: `crossplane.image` where given, else, with
 * `klutch:imageRegistry`, the mirror's copy of the chart's image and an ImageConfig for every
 * registry the default packages and their dependencies come from. A local node runs its own
 * build (its plan's image) and pulls nothing (validation refuses a mirror there).
 */
export function crossplaneImages(
  config: EnvironmentConfig,
  version: string,
  onNode: boolean,
): {
  image?: { repository: string; tag: string };
  registryMirror?: { registry: string; upstreams: string[] };
} {
  if (onNode) return {};
  const mirror = config.imageRegistry;
  const ref =
    config.crossplane.image ??
    (mirror ? mirroredImage(`${CROSSPLANE_IMAGE_REPOSITORY}:v${version}`, mirror) : undefined);
  const image = ref ? repositoryAndTag(ref) : undefined;
  const upstreams = [
    ...new Set(
      [...Object.values(DEFAULT_PACKAGES), CROSSPLANE_IMAGE_REPOSITORY].map((r) => splitRegistry(r).registry),
    ),
  ].sort();
  return {
    ...(image ? { image } : {}),
    ...(mirror ? { registryMirror: { registry: mirror, upstreams } } : {}),
  };
}
