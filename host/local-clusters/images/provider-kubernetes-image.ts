import * as path from "node:path";
import { userEntries } from "./host-rootfs";
import type { ImageSpec } from "./oci-layout";

/** The uid upstream's provider-kubernetes image runs as (distroless `nonroot`). */
const PROVIDER_UID = 65532;
const BINARY = "/usr/local/bin/crossplane-kubernetes-provider";

/**
 * provider-kubernetes' runtime image as upstream lays it out (cluster/images/provider-kubernetes/
 * Dockerfile at v0.18.0: the static binary as /usr/local/bin/crossplane-kubernetes-provider on
 * distroless/static, user 65532), from the binary the toolchain builds
 * (`KLUTCH_PROVIDER_KUBERNETES_DIR`). `crossplane xpkg build` embeds it in the Provider package.
 */
export function providerKubernetesImageSpec(toolchainDir: string, version: string): ImageSpec {
  return {
    repository: "klutch.local/provider-kubernetes",
    version,
    config: { Entrypoint: [BINARY], User: `${PROVIDER_UID}:${PROVIDER_UID}` },
    dockerManifest: true,
    entries: [
      { type: "file", path: BINARY, mode: 0o755, source: path.join(toolchainDir, "bin", "provider") },
      ...userEntries([{ name: "nonroot", uid: PROVIDER_UID, home: "/home/nonroot" }]),
      { type: "dir", path: "/tmp", mode: 0o1777 },
    ],
  };
}
