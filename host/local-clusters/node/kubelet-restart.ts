/**
 * When a kubelet that exited during start-up is started again.
 *
 * Every kubelet serves its device-plugin registration socket at one fixed path,
 * `/var/lib/kubelet/device-plugins/kubelet.sock`: the path is the constant
 * `DevicePluginPath` of `k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1`, and `--root-dir`
 * does not move it. The local nodes share the host's mount namespace (their kubelet and
 * containerd must see the same volume mounts), so their kubelets share that file. At start the
 * registration server (`pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go`, Kubernetes
 * 1.37, as 1.33) removes the socket it finds and then listens on the path. Two kubelets starting at
 * the same moment can interleave those two steps; the loser's `net.Listen` fails with
 * "address already in use", its ContainerManager does not start, and it exits (CI, stop 41:
 * two test files started their clusters together).
 *
 * The other race is with containerd's CRI service: containerd answers `ctr version` (what the
 * node waits for) before its CRI service has finished initializing, and until then every CRI
 * call fails with "server is not initialized yet" (containerd v1.7.29
 * pkg/cri/instrument/instrumented_service.go checkInitialized; Debian 12 runs 1.6.20). A kubelet
 * started then fails its runtime check and exits. Seen in CI when a node was started again with
 * its images already imported, so nothing came between containerd and the kubelet.
 *
 * A node's kubelet is supervised as systemd supervises it in a kubeadm install
 * (`Restart=always`): these exits are lost races, not faults of the node, and the next start
 * wins them. Any other exit stays an error, reported with the log.
 */

/** The one socket path every kubelet on the machine listens on. */
export const DEVICE_PLUGIN_SOCKET = "/var/lib/kubelet/device-plugins/kubelet.sock";

/** The lines the kubelet writes when it lost the race for the device-plugin socket. */
const DEVICE_PLUGIN_SOCKET_RACE =
  /device-plugins\/kubelet\.sock: bind: address already in use|Failed to start ContainerManager.*device-plugins/;

/** The kubelet's line when containerd's CRI service was not initialized yet. */
const CRI_NOT_INITIALIZED = /validate CRI v1 runtime API for endpoint .*server is not initialized yet/;

/** How many times one node start restarts its kubelet after a lost race. */
export const KUBELET_RACE_RESTARTS = 3;

/** Whether the kubelet's latest run ended because another kubelet held the device-plugin socket. */
export function lostDevicePluginSocketRace(latestRunLog: string): boolean {
  return DEVICE_PLUGIN_SOCKET_RACE.test(latestRunLog);
}

/** Which start-up race the kubelet's latest run lost, in words for the node's log; undefined for any other exit. */
export function lostRace(latestRunLog: string): string | undefined {
  if (lostDevicePluginSocketRace(latestRunLog))
    return `another node's kubelet held ${DEVICE_PLUGIN_SOCKET} as it started`;
  if (CRI_NOT_INITIALIZED.test(latestRunLog)) return "containerd's CRI service was not initialized yet";
  return undefined;
}

/** Whether to start the kubelet again: it lost a race, and the restarts are not used up. */
export function restartKubelet(latestRunLog: string, restartsSoFar: number): boolean {
  return restartsSoFar < KUBELET_RACE_RESTARTS && lostRace(latestRunLog) !== undefined;
}
