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
 * A node's kubelet is supervised as systemd supervises it in a kubeadm install
 * (`Restart=always`): this one exit is a lost race, not a fault of the node, and the next
 * start wins it. Any other exit stays an error, reported with the log.
 */

/** The one socket path every kubelet on the machine listens on. */
export const DEVICE_PLUGIN_SOCKET = "/var/lib/kubelet/device-plugins/kubelet.sock";

/** The lines the kubelet writes when it lost the race for the device-plugin socket. */
const DEVICE_PLUGIN_SOCKET_RACE =
  /device-plugins\/kubelet\.sock: bind: address already in use|Failed to start ContainerManager.*device-plugins/;

/** How many times one node start restarts its kubelet after a lost race. */
export const KUBELET_RACE_RESTARTS = 3;

/** Whether the kubelet's latest run ended because another kubelet held the device-plugin socket. */
export function lostDevicePluginSocketRace(latestRunLog: string): boolean {
  return DEVICE_PLUGIN_SOCKET_RACE.test(latestRunLog);
}

/** Whether to start the kubelet again: it lost the race, and the restarts are not used up. */
export function restartKubelet(latestRunLog: string, restartsSoFar: number): boolean {
  return restartsSoFar < KUBELET_RACE_RESTARTS && lostDevicePluginSocketRace(latestRunLog);
}
