import type { ClusterLayout } from "./layout";
import type { PkiFiles } from "./pki";
import type { ClusterPorts } from "./types";
import { LOCAL_SERVICE_CIDR } from "../../../lib/local/network";

const LOOPBACK = "127.0.0.1";

/** The issuer (and audience) of service account tokens, as a real cluster would name itself. */
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";

/**
 * The ClusterIP range. It may be the same in every cluster: a cluster's kube-proxy (when it
 * has a node) programs it inside that node's own network namespace only. Its first address is
 * in the API server's cert.
 */
export const SERVICE_CLUSTER_IP_RANGE = LOCAL_SERVICE_CIDR;

export function etcdArgs(layout: ClusterLayout, ports: ClusterPorts): string[] {
  const client = `http://${LOOPBACK}:${ports.etcdClient}`;
  const peer = `http://${LOOPBACK}:${ports.etcdPeer}`;
  return [
    `--name=${layout.name}`,
    `--data-dir=${layout.etcdDataDir}`,
    // Plain HTTP on loopback only: the API server is the one client, on the same machine.
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${layout.name}=${peer}`,
    "--initial-cluster-state=new",
    // These are throw-away dev clusters: losing the last writes in a machine crash is fine,
    // while an fsync per write makes four clusters on one disk slow (API server start-up
    // alone writes thousands of keys).
    "--unsafe-no-fsync",
    // Rebind the ports at once after a crash instead of waiting out TIME_WAIT.
    "--socket-reuse-address",
    // 512 MiB is plenty for a dev cluster and keeps a runaway controller from filling the disk.
    "--quota-backend-bytes=536870912",
    // Fewer raft entries kept in memory between snapshots (the default 100000 costs RAM).
    "--snapshot-count=10000",
    "--log-level=warn",
  ];
}

export function apiServerArgs(layout: ClusterLayout, ports: ClusterPorts, pki: PkiFiles): string[] {
  return [
    `--etcd-servers=http://${LOOPBACK}:${ports.etcdClient}`,
    `--bind-address=${LOOPBACK}`,
    `--advertise-address=${LOOPBACK}`,
    // The Endpoints API refuses loopback addresses, so the default reconciler would fail to
    // publish 127.0.0.1 for the `kubernetes` Service every 10 s, forever. The API server keeps
    // creating the Service; a cluster's node publishes its endpoints, the host end of its link
    // (node/api-endpoints.ts), so pods reach the API server by in-cluster config.
    "--endpoint-reconciler-type=none",
    `--secure-port=${ports.apiServer}`,
    // Go listeners skip SO_REUSEADDR unless asked: without this a restart right after a crash
    // fails with "address already in use" while old connections sit in TIME_WAIT.
    "--permit-address-sharing",
    `--tls-cert-file=${pki.apiServerCert}`,
    `--tls-private-key-file=${pki.apiServerKey}`,
    `--client-ca-file=${pki.caCert}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${pki.serviceAccountKey}`,
    `--api-audiences=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    // No AlwaysAllow: scoped identities must really be denied. The Node authorizer and the
    // NodeRestriction admission plugin limit a local node's kubelet (system:node:<name>) to its
    // own Node and the pods bound to it, as on a real cluster.
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    // How it reaches a kubelet for logs, exec and port-forward (the kubelet checks the client
    // cert against the cluster CA and asks the API server whether this user may).
    `--kubelet-client-certificate=${pki.apiServerKubeletClientCert}`,
    `--kubelet-client-key=${pki.apiServerKubeletClientKey}`,
    "--kubelet-preferred-address-types=InternalIP",
    // Webhooks and aggregated APIs are called at their Service's endpoints, not its ClusterIP:
    // this API server runs on the host, outside every node's Service and pod network, and a
    // node's hostNetwork pod (Crossplane core) is at the node's own address, which the host
    // reaches over the node's link (cmd/kube-apiserver/app/server.go buildServiceResolver).
    "--enable-aggregator-routing=true",
    "--allow-privileged=true",
    "--profiling=false",
    // Never write self-signed serving certs to the default /var/run/kubernetes.
    `--cert-dir=${layout.pkiDir}`,
  ];
}

export function controllerManagerArgs(layout: ClusterLayout, ports: ClusterPorts, pki: PkiFiles): string[] {
  return [
    `--kubeconfig=${layout.controllerManagerKubeconfig}`,
    // The same identity checks tokens and access for its health port; without these it logs
    // warnings and cannot authenticate anyone there.
    `--authentication-kubeconfig=${layout.controllerManagerKubeconfig}`,
    `--authorization-kubeconfig=${layout.controllerManagerKubeconfig}`,
    `--bind-address=${LOOPBACK}`,
    `--secure-port=${ports.controllerManager}`,
    "--permit-address-sharing",
    `--tls-cert-file=${pki.controllerManagerServingCert}`,
    `--tls-private-key-file=${pki.controllerManagerServingKey}`,
    `--client-ca-file=${pki.caCert}`,
    // The client CA is given above; without this it also looks for a front-proxy
    // (requestheader) CA in kube-system, finds none, and logs an error every few seconds.
    "--authentication-skip-lookup",
    // One instance per cluster: leader election would only add start-up delay and lease churn.
    "--leader-elect=false",
    // Each controller acts as its own service account, so RBAC applies to controllers as well.
    "--use-service-account-credentials=true",
    `--service-account-private-key-file=${pki.serviceAccountKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    `--cluster-name=${layout.name}`,
    // No nodes get pod CIDRs here: there are no nodes.
    "--controllers=*,-node-ipam-controller",
    "--profiling=false",
  ];
}
