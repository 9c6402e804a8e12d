/**
 * The `default/kubernetes` Service's endpoints for a cluster with a node: pods reach the API
 * server through KUBERNETES_SERVICE_HOST/PORT (the Service's ClusterIP, 10.96.0.1:443, which the
 * kubelet injects into every container), and kube-proxy sends that to these endpoints.
 *
 * Why a node publishes them rather than the API server's own endpoint reconciler: the API
 * server listens on loopback and runs with `--endpoint-reconciler-type=none`, because the
 * reconciler would publish `--advertise-address` and the Endpoints API refuses a loopback one.
 * The address pods can use is the host end of the node's link (the node's nft table forwards
 * `<host end>:<API port>` to loopback), which exists only once the node's network does, after
 * the API server started. With `none`, kube-apiserver v1.37.2 still creates the Service (port
 * 443, targetPort = its secure port: pkg/controlplane/controller/kubernetesservice/controller.go,
 * UpdateKubernetesService and createPortAndServiceSpec) and never writes these objects
 * (pkg/controlplane/reconcilers/none.go), so what the node writes stays. Since 1.37 the lease
 * reconciler refuses a loopback advertise address at start-up (lease.go ValidateIP), where 1.33's
 * failed every 10 s; `none`'s ValidateIP accepts it.
 *
 * The objects are the ones the lease reconciler would write (pkg/controlplane/reconcilers/
 * endpointsadapter.go): an Endpoints `kubernetes` labelled `endpointslice.kubernetes.io/
 * skip-mirror: "true"` (so the EndpointSlice mirroring controller leaves it alone) and an
 * EndpointSlice `kubernetes` labelled `kubernetes.io/service-name: kubernetes`, IPv4, one ready
 * endpoint, port `https`/TCP. kube-proxy (v1.37, cmd/kube-proxy/app/server.go) reads only the EndpointSlice.
 */

export const API_ENDPOINTS_NAME = "kubernetes";
const PORT_NAME = "https";

export interface ApiEndpointObjects {
  endpoints: Record<string, unknown>;
  endpointSlice: Record<string, unknown>;
}

export function apiServerEndpoints(address: string, port: number): ApiEndpointObjects {
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address) || address.startsWith("127."))
    throw new Error(
      `the kubernetes Service's endpoint must be a non-loopback IPv4 address, not "${address}"`,
    );
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`the kubernetes Service's endpoint port ${port} is not a TCP port`);
  const metadata = { name: API_ENDPOINTS_NAME, namespace: "default" };
  return {
    endpoints: {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: { ...metadata, labels: { "endpointslice.kubernetes.io/skip-mirror": "true" } },
      subsets: [{ addresses: [{ ip: address }], ports: [{ name: PORT_NAME, port, protocol: "TCP" }] }],
    },
    endpointSlice: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { ...metadata, labels: { "kubernetes.io/service-name": API_ENDPOINTS_NAME } },
      addressType: "IPv4",
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: PORT_NAME, port, protocol: "TCP" }],
    },
  };
}
