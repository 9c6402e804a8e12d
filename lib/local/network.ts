/**
 * The address ranges of the local clusters (local-clusters/), chosen by this project. They are
 * here, apart from the code that starts the clusters, so validation can check a stack's
 * settings against them without loading that code.
 */

/** kube-apiserver `--service-cluster-ip-range` of every local cluster. */
export const LOCAL_SERVICE_CIDR = "10.96.0.0/16";
/** The /30 links between this machine and the local nodes (local-clusters/node/addresses.ts). */
export const LOCAL_NODE_LINK_RANGE = "172.30.0.0/16";
/** A local node's pod CIDR when its cluster sets no `network.podCidr`. */
export const LOCAL_DEFAULT_POD_CIDR = "10.244.0.0/24";
