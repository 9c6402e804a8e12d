/**
 * Where the instance-names watcher is: its entry point in the repository, and the process the
 * bridge image holds for it (host/local-clusters/images/bridge-image.ts builds it there; the
 * names server's pod runs it, components/instance-names/names-server.ts). One place for both,
 * so the pod's command names what the image holds.
 */
export const INSTANCE_NAMES_ENTRY = "programs/instance-names/main.ts";
/** The bridge image's application root. */
export const BRIDGE_IMAGE_APP = "/app";
export const INSTANCE_NAMES_PROCESS = `${BRIDGE_IMAGE_APP}/${INSTANCE_NAMES_ENTRY.replace(/\.ts$/, ".js")}`;
