import { MIRROR_PATTERN } from "../images/mirror";
import { BIND_RELEASES, DEFAULT_BIND_RELEASE } from "../bind/upstream/release";
import { z } from "zod";
import { cidr, port } from "./fields";
import { CROSSPLANE_VERSION_PATTERN } from "./crossplane-versions";
import { EKS_DEFAULT_KUBERNETES_VERSION, supportedKubernetes } from "./kubernetes-versions";
import { DNS_LABEL, DNS_LABEL_RULE } from "../net/dns";

/**
 * The environment config model: one object per stack, read from the `klutch:` config
 * namespace. This file holds the shape of each setting. It knows no network implementation:
 * an app cluster's `networkConnector` is any object with an `implementation` here, and
 * components/config/schema.ts puts the registry's union of the implementations' schemas in its place
 * (each in network/<implementation>/model/config.ts). Rules that relate several settings
 * (unique names, CIDR overlaps) live in components/config/validate.ts. Every problem is reported in one pass.
 */

export const INFRASTRUCTURES = ["local", "existing", "aws", "openstack"] as const;
export type Infrastructure = (typeof INFRASTRUCTURES)[number];

const dnsLabel = z.string().regex(DNS_LABEL, DNS_LABEL_RULE);

export { port };

const httpsUrl = z
  .string()
  .url("must be a URL such as https://bind.example.com")
  .refine((u) => u.startsWith("https://"), "must use https://");

const network = z
  .object({
    /** The cluster's own network: its VPC, OpenStack subnet or node network. */
    nodeCidr: cidr,
    podCidr: cidr.optional(),
    serviceCidr: cidr.optional(),
    /**
     * Where the cluster's traffic leaves from when that is not nodeCidr (NAT gateways'
     * addresses); the proxy admits these.
     */
    egressCidrs: z.array(cidr).min(1).optional(),
  })
  .strict();

const kubeconfigSource = z
  .object({
    /** Path of a kubeconfig file, absolute or relative to the project directory. */
    path: z.string().min(1, "must name a kubeconfig file"),
    /** Context to use; the file's current-context when omitted. */
    context: z.string().min(1).optional(),
  })
  .strict();

const awsAccountId = z.string().regex(/^\d{12}$/, "must be a 12-digit AWS account id");
const awsRegion = z
  .string()
  .regex(/^[a-z]{2}(-gov)?-[a-z]+-\d$/, "must be an AWS region such as eu-central-1");

const awsCluster = z
  .object({
    region: awsRegion,
    accountId: awsAccountId.optional(),
    /** Role the AWS provider assumes for this cluster's account. */
    roleArn: z
      .string()
      .regex(/^arn:aws:iam::\d{12}:role\/.+$/, "must be an IAM role ARN")
      .optional(),
    availabilityZoneCount: z.number().int().min(1).max(6).prefault(2),
    kubernetesVersion: supportedKubernetes(
      z
        .string()
        .regex(/^1\.\d+$/, `must be a Kubernetes minor version such as ${EKS_DEFAULT_KUBERNETES_VERSION}`),
    ).prefault(EKS_DEFAULT_KUBERNETES_VERSION),
    nodeGroup: z
      .object({
        instanceType: z.string().min(1).prefault("m6i.large"),
        minSize: z.number().int().min(1).prefault(2),
        desiredSize: z.number().int().min(1).prefault(2),
        maxSize: z.number().int().min(1).prefault(4),
      })
      .strict()
      .prefault({}),
    /** Adopt an existing VPC instead of creating one. */
    existingVpcId: z
      .string()
      .regex(/^vpc-[0-9a-f]+$/, "must be a VPC id such as vpc-0abc123")
      .optional(),
    /** Adopt an existing EKS cluster instead of creating one (needs existingVpcId). */
    existingClusterName: z.string().min(1).optional(),
    /** With existingVpcId: the route tables that get routes to peered VPCs. */
    existingRouteTableIds: z
      .array(z.string().regex(/^rtb-[0-9a-f]+$/, "must be a route table id such as rtb-0abc123"))
      .optional(),
    /** With existingVpcId and no existingClusterName: the private subnets for the EKS cluster. */
    existingSubnetIds: z
      .array(z.string().regex(/^subnet-[0-9a-f]+$/, "must be a subnet id such as subnet-0abc123"))
      .optional(),
  })
  .strict();

const openstackCluster = z
  .object({
    region: z.string().min(1).optional(),
    externalNetworkId: z.string().min(1, "must name the external (floating IP) network"),
    image: z.string().min(1).prefault("fedora-coreos-40"),
    flavor: z.string().min(1).prefault("m1.large"),
    masterFlavor: z.string().min(1).prefault("m1.medium"),
    nodeCount: z.number().int().min(1).prefault(2),
    dnsNameservers: z.array(z.ipv4()).prefault([]),
    keypair: z.string().min(1).optional(),
    /** Kubernetes version label (kube_tag) for the Magnum template, e.g. v1.35.2. */
    kubernetesVersion: supportedKubernetes(z.string().min(1)).optional(),
    /** Adopt an existing network instead of creating one; network.nodeCidr must be its subnet's CIDR. */
    existingNetwork: z
      .object({ networkId: z.string().min(1), subnetId: z.string().min(1), routerId: z.string().min(1) })
      .strict()
      .optional(),
    /** For the wireguard path: image and flavor of the gateway VM. */
    gatewayImage: z.string().min(1).prefault("debian-12"),
    gatewayFlavor: z.string().min(1).prefault("m1.small"),
    /**
     * Where the gateway VM may fetch its packages (wireguard, nftables, socat, python3) at first
     * boot: CIDRs opened for egress on 80 and 443 (its security group allows nothing else out).
     * [] when gatewayImage has them already: nothing is installed and nothing opened.
     */
    gatewayPackageMirrors: z.array(cidr).prefault(["0.0.0.0/0"]),
  })
  .strict();

const clusterFields = {
  name: dnsLabel,
  infrastructure: z.enum(INFRASTRUCTURES),
  kubeconfig: kubeconfigSource.optional(),
  aws: awsCluster.optional(),
  openstack: openstackCluster.optional(),
  network: network.optional(),
  /**
   * Local clusters only: 1 runs a node (containerd, kubelet, kube-proxy, kube-scheduler) so
   * pods really start; 0 (default) is an API server without nodes.
   */
  nodes: z
    .number()
    .int("must be a whole number")
    .min(0)
    .max(1, "a local cluster has at most one node")
    .optional(),
};

export const controlPlaneCluster = z
  .object({
    ...clusterFields,
    /** The data-service network, when it is not the control plane's own network. */
    dataServiceCidr: cidr.optional(),
  })
  .strict();

/**
 * What every implementation's settings share. Code here sees an app cluster's connector as
 * this; components/config/schema.ts gives the precise union, and an implementation reads its own
 * settings through its schema.
 */
export const anyNetworkConnector = z.object({ implementation: z.string().min(1) }).passthrough();

function appClusterWith<C extends z.ZodTypeAny>(networkConnector: C) {
  return z
    .object({
      ...clusterFields,
      networkConnector,
      /** Exported APIs this app cluster binds (by resource name); all exported APIs when omitted. */
      apis: z.array(z.string().min(1)).optional(),
      /**
       * The OIDC subject (the ID token's `sub`) of whoever runs `kubectl bind` for this app
       * cluster. The binding's namespace is then annotated as the backend files its own, so an
       * interactive bind finds it instead of making a second namespace (docs/klutch-bind.md).
       */
      bindSubject: z.string().min(1).optional(),
    })
    .strict();
}

const permissionClaim = z
  .object({
    group: z.string(),
    resource: z.string().min(1),
    version: z.string().min(1).prefault("v1"),
    /** Which side's objects are synced: those the provider (control plane) owns, or the consumer's. */
    selector: z
      .object({ owner: z.enum(["Provider", "Consumer"]) })
      .strict()
      .optional(),
  })
  .strict();

export const exportedApi = z
  .object({
    group: z.string().min(1),
    version: z.string().regex(/^v\d+((alpha|beta)\d+)?$/, "must be a Kubernetes API version such as v1"),
    resource: z.string().regex(/^[a-z][a-z0-9]*$/, "must be a plural lowercase resource name"),
    kind: z
      .string()
      .regex(/^[A-Z][A-Za-z0-9]*$/, "must be a Kind such as PostgresqlInstance")
      .optional(),
    permissionClaims: z.array(permissionClaim).prefault([]),
  })
  .strict();

/** Dex's image when `oidc.image` is left out (pinned). */
export const DEFAULT_DEX_IMAGE = "ghcr.io/dexidp/dex:v2.41.1";

export const oidc = z.discriminatedUnion("provider", [
  z
    .object({
      provider: z.literal("dex"),
      /** Issuer URL; `<bind.externalAddress>/dex` (served by the backend's exposure) when omitted. */
      issuerUrl: httpsUrl.optional(),
      clientId: z.string().min(1).prefault("klutch-bind"),
      image: z.string().min(1).prefault(DEFAULT_DEX_IMAGE),
      /** Size of the volume holding Dex's SQLite database (signing keys, sessions). */
      storageSize: z
        .string()
        .regex(/^[1-9][0-9]*(Mi|Gi)$/, "must be a size such as 1Gi")
        .prefault("1Gi"),
      /** Dex connectors (upstream identity providers), as in Dex's own config: {type, id, name, config}. */
      connectors: z
        .array(
          z
            .object({
              type: z.string().min(1),
              id: z.string().min(1),
              name: z.string().min(1),
              config: z.record(z.string(), z.unknown()).optional(),
            })
            .strict(),
        )
        .prefault([]),
    })
    .strict(),
  z
    .object({
      provider: z.literal("keycloak"),
      issuerUrl: httpsUrl,
      clientId: z.string().min(1),
    })
    .strict(),
]);

export const localClusters = z
  .object({
    /** Where `npm run clusters -- up` keeps the local clusters, relative to the project. */
    stateDir: z.string().min(1).prefault(".klutch/local"),
  })
  .strict();

/**
 * A pinned container image: `[registry/]repository` with a tag or a digest (the grammar of
 * distribution/reference's `reference.go`, reduced to lower-case names).
 */
const imageReference = z
  .string()
  .regex(
    /^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?$/,
    "must be an image reference such as registry.example.com/klutch/bridge:0.1.0",
  )
  .refine((r) => /:[A-Za-z0-9_][A-Za-z0-9_.-]*$|@sha256:[a-f0-9]{64}$/.test(r) && !/:latest$/.test(r), {
    message: "must be pinned: give a tag other than latest, or @sha256:<digest>",
  });

/** The Crossplane packages Klutch installs when their settings are left out (pinned). */
export const DEFAULT_PACKAGES = {
  providerKubernetes: "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1",
  providerAnynines: "public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0",
  functionPatchAndTransform: "xpkg.upbound.io/crossplane-contrib/function-patch-and-transform:v0.9.2",
  dataservicesConfiguration: "public.ecr.aws/w5n9a2g2/klutch/dataservices:v1.5.0",
} as const;

/** A Crossplane package reference: registry/repository:tag, pinned (no `latest`). */
const xpkg = z
  .string()
  .regex(
    /^[a-z0-9.-]+(:[0-9]+)?(\/[a-z0-9._-]+)+:v?[0-9][A-Za-z0-9.+-]*$/,
    "must be a pinned package reference such as xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1",
  );

export const crossplane = z
  .object({
    /**
     * Crossplane core: 2.0.x to 2.4.x, or Klutch's upstream line 1.17.x to 1.20.x. Left out:
     * 2.4.0, or 1.20.11 where core runs as a process (lib/crossplane/crossplane-versions.ts).
     */
    version: z
      .string()
      .regex(
        CROSSPLANE_VERSION_PATTERN,
        "must be a Crossplane 2.0.x to 2.4.x version, or 1.17.x to 1.20.x (Klutch's upstream line)",
      )
      .optional(),
    /**
     * Crossplane core's image (with a tag: the chart takes a repository and a tag); the chart's
     * own (`xpkg.crossplane.io/crossplane/crossplane:v<version>`) when omitted, or from
     * `klutch:imageRegistry` when that is set. Not on local clusters, which run their own build.
     */
    image: imageReference
      .refine((r) => !r.includes("@"), { message: "must name a tag: the chart takes a repository and a tag" })
      .optional(),
    /** Helm chart repository; ignored when chartPath is set. */
    chartRepository: z.string().url().prefault("https://charts.crossplane.io/stable"),
    /** A local chart folder (the local stack uses the one in the toolchain's Crossplane module). */
    chartPath: z.string().min(1).optional(),
    providerKubernetes: xpkg.prefault(DEFAULT_PACKAGES.providerKubernetes),
    providerAnynines: xpkg.prefault(DEFAULT_PACKAGES.providerAnynines),
    functionPatchAndTransform: xpkg.prefault(DEFAULT_PACKAGES.functionPatchAndTransform),
    dataservicesConfiguration: xpkg.prefault(DEFAULT_PACKAGES.dataservicesConfiguration),
    /**
     * Klutch's composition function as a package this control plane can pull: the release's
     * `function-klutch-v<version>.xpkg` pushed to your registry (docs/provider.md). With it, the
     * ServiceBinding compositions that add the network connector where a8s serves the instances
     * (`a8s-servicebinding-network`, and `-<implementation>` per offered implementation) are
     * installed too. Not on local clusters, whose Crossplane installs it from the local registry.
     */
    functionKlutch: xpkg.optional(),
    /** anynines service brokers, one ProviderConfig each; credentials are klutch:anyninesCredentials. */
    anyninesServices: z
      .array(
        z
          .object({
            /** Service type, e.g. postgresql; names the ProviderConfigs. */
            name: dnsLabel,
            serviceBrokerUrl: z.string().url(),
            /** The service's backup manager; no backup ProviderConfig when omitted. */
            backupManagerUrl: z.string().url().optional(),
          })
          .strict(),
      )
      .prefault([]),
    /**
     * Run Crossplane core as a process on this machine against the control plane, not as the
     * chart's pods. Unset: true on a local control plane without a node (no pod can start
     * there), else false (lib/crossplane/crossplane-plan.ts).
     */
    runLocally: z.boolean().optional(),
    /**
     * Use the Crossplane core an operator already runs on an existing control plane (in
     * `crossplane-system`, of `version`'s minor, with SSA claims on) and install only Klutch's
     * packages on it: no chart, and destroy leaves that core installed. Checked against the
     * control plane before anything is registered (lib/crossplane/installed-crossplane.ts).
     */
    useInstalled: z.boolean().optional(),
  })
  .strict();

export const bind = z
  .object({
    /** Where app clusters reach the klutch-bind backend (https). */
    externalAddress: httpsUrl.prefault("https://bind.klutch.localhost"),
    /**
     * The klutch-bind release: its images, CRDs and flags (lib/bind/upstream/release.ts). v1.4.0 is the
     * newest with published images; v1.5.0 ships the same konnector and backend code.
     */
    version: z.enum(BIND_RELEASES).prefault(DEFAULT_BIND_RELEASE),
    /** The backend's image; the release's image when omitted. */
    image: z.string().min(1).optional(),
    /** The konnector's image; the release's image when omitted. */
    konnectorImage: z.string().min(1).optional(),
    /**
     * The backend's /authorize route as `kubectl bind` opens it (https);
     * `<externalAddress>/authorize` when omitted. Always passed, since the backend would
     * otherwise advertise a plain-http URL.
     */
    authorizeUrl: httpsUrl.optional(),
    /**
     * Wait in `up` until the backend has made each APIServiceExport from its request; defaults
     * to true except on local clusters, where the backend's image cannot run.
     */
    awaitExports: z.boolean().optional(),
    namespacePrefix: dnsLabel.prefault("cluster"),
    /**
     * The control plane's Kubernetes API address that konnectors reach (https); the control
     * plane kubeconfig's server, with its CA, when omitted.
     */
    apiServerAddress: httpsUrl.optional(),
    /** The backend has no leader election at the pinned releases: validation allows only 1. */
    replicas: z.number().int().min(1).prefault(1),
    /** Change to make new cookie keys (users then log in again). */
    keyRotation: z.string().min(1).prefault("initial"),
    prettyName: z.string().min(1).prefault("Klutch"),
    consumerScope: z.enum(["Namespaced", "Cluster"]).prefault("Namespaced"),
    /** How the backend is exposed at externalAddress. */
    exposure: z.enum(["ingress", "gateway", "none"]).prefault("ingress"),
    ingressClassName: z.string().min(1).prefault("nginx"),
    /** GatewayClass of the Gateway made for exposure: gateway. */
    gatewayClassName: z.string().min(1).prefault("nginx"),
    /** TLS: a cert-manager issuer, or a provided certificate (klutch:bindTlsCertificate/klutch:bindTlsKey). */
    tls: z
      .discriminatedUnion("source", [
        z
          .object({
            source: z.literal("cert-manager"),
            issuer: z.string().min(1),
            issuerKind: z.enum(["Issuer", "ClusterIssuer"]).prefault("ClusterIssuer"),
          })
          .strict(),
        z.object({ source: z.literal("provided") }).strict(),
      ])
      .prefault({ source: "cert-manager", issuer: "letsencrypt", issuerKind: "ClusterIssuer" }),
  })
  .strict();

/**
 * The Crossplane bridge as a Deployment on the control plane (components/bridge/bridge-deployment.ts).
 * Which rules relate it to the clusters (a node to run on, the node's images, a shared state)
 * is lib/bridge/bridge-plan.ts.
 */
export const bridge = z
  .object({
    /**
     * Deploy it. Default: when the control plane is a local cluster with a node (elsewhere set
     * it, with `state`; a local control plane without a node cannot run pods: `npm run bridge`).
     */
    deploy: z.boolean().optional(),
    /** The bridge image; a local node's imported `klutch.local/bridge`, else the published image. */
    image: imageReference.optional(),
    /** One leads (the Lease), the others stand by. */
    replicas: z.number().int("must be a whole number").min(1).prefault(2),
    /**
     * Where the groups' Pulumi state lives, the same for every replica: `{kind: backend, url}`
     * (s3://, gs://, azblob://, https://), or `{kind: hostPath, path}` on a one-node local
     * cluster (default there: `<cluster dir>/bridge-state`).
     */
    state: z
      .discriminatedUnion("kind", [
        z.object({ kind: z.literal("hostPath"), path: z.string().min(1) }).strict(),
        z.object({ kind: z.literal("backend"), url: z.string().min(1) }).strict(),
      ])
      .optional(),
    /** HAProxy image of the proxy pods; a local node's imported `klutch.local/haproxy`, else TcpProxy's. */
    proxyImage: imageReference.optional(),
    /**
     * The IAM role the deployed bridge's pods assume for its S3 state, through EKS's IAM roles for
     * service accounts: its ServiceAccount carries `eks.amazonaws.com/role-arn` (lib/bridge/aws-role.ts).
     */
    awsRoleArn: z.string().min(1).optional(),
  })
  .strict();

/** kubeadm 1.37's CoreDNS (k8s.io/kubernetes@v1.37.2 cmd/kubeadm/app/constants CoreDNSVersion). */
export const DEFAULT_NAMES_COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.14.6";

const dnsZone = z
  .string()
  .transform((zone) => zone.toLowerCase().replace(/\.$/, ""))
  .refine((zone) => zone.length <= 253 && zone.split(".").every((label) => DNS_LABEL.test(label)), {
    message: "must be a DNS name of labels joined by dots, such as service.dc1.consul",
  });

/**
 * Instance names (docs/data-services.md, "TLS that verifies the server's name"): an instance
 * host in one of `zones` keeps its name in a binding's Secret, and each app cluster answers it
 * with the path's address: a names server there (CoreDNS with a watcher of the bound claims,
 * lib/instance-names/) and a stub zone in the cluster's own DNS forwarding the zones to it.
 */
export const instanceNames = z
  .object({
    /** The DNS zones of the instances' names (a9s: its Consul domain); none turns it off. */
    zones: z.array(dnsZone).prefault([]),
    /** The watcher's image: the bridge image (a local node's `klutch.local/bridge`, else the published one). */
    image: imageReference.optional(),
    /** The names server's CoreDNS: a local node's `klutch.local/coredns`, else kubeadm's. */
    corednsImage: imageReference.optional(),
  })
  .strict();

export const DEFAULT_EXPORTED_APIS: z.input<typeof exportedApi>[] = [
  { group: "anynines.com", version: "v1", resource: "postgresqlinstances", kind: "PostgresqlInstance" },
  {
    group: "anynines.com",
    version: "v1",
    resource: "servicebindings",
    kind: "ServiceBinding",
    permissionClaims: [
      { group: "", resource: "secrets", version: "v1", selector: { owner: "Provider" } },
      { group: "", resource: "configmaps", version: "v1", selector: { owner: "Provider" } },
    ],
  },
  { group: "anynines.com", version: "v1", resource: "backups", kind: "Backup" },
  { group: "anynines.com", version: "v1", resource: "restores", kind: "Restore" },
];

/**
 * Every setting of the `klutch:` namespace (keys without the namespace), with the app
 * clusters' `networkConnector` as the given schema: components/config/schema.ts passes the registry's
 * union, with the registry's default implementation.
 */
export function environmentSchemaWith<C extends z.ZodTypeAny>(networkConnector: C) {
  const appCluster = appClusterWith(networkConnector);
  const environmentSchema = z
    .object({
      environment: dnsLabel,
      /**
       * An operator's registry mirror (`host[:port][/path]`): every image and package the
       * environment deploys that no setting names comes from it, each under its repository's own
       * path (lib/images/mirror.ts). Not with local clusters, which run the images built here.
       */
      // "" is Pulumi.yaml's default: no mirror.
      imageRegistry: z
        .union([
          z.literal(""),
          z
            .string()
            .regex(
              MIRROR_PATTERN,
              "must be a registry such as mirror.example.com or mirror.example.com:5000/klutch",
            ),
        ])
        .optional(),
      controlPlane: controlPlaneCluster,
      appClusters: z.array(appCluster).prefault([]),
      oidc: oidc.prefault({ provider: "dex" }),
      exportedApis: z.array(exportedApi).min(1).prefault(DEFAULT_EXPORTED_APIS),
      localClusters: localClusters.prefault({}),
      crossplane: crossplane.prefault({}),
      bind: bind.prefault({}),
      bridge: bridge.prefault({}),
      instanceNames: instanceNames.prefault({}),
    })
    .strict();
  return { appCluster, environmentSchema };
}

const anyImplementation = environmentSchemaWith(anyNetworkConnector);

/** An environment whatever its app clusters' implementations; what the pure core plans with. */
export type EnvironmentConfig = z.output<typeof anyImplementation.environmentSchema>;
export type EnvironmentConfigInput = z.input<typeof anyImplementation.environmentSchema>;
export type ControlPlaneConfig = z.output<typeof controlPlaneCluster>;
export type AppClusterConfig = z.output<typeof anyImplementation.appCluster>;
export type ClusterConfig = ControlPlaneConfig | AppClusterConfig;
export type NetworkConnectorConfig = z.output<typeof anyNetworkConnector>;
export type ExportedApiConfig = z.output<typeof exportedApi>;
export type OidcConfig = z.output<typeof oidc>;
export type CrossplaneConfig = z.output<typeof crossplane>;
export type BindConfig = z.output<typeof bind>;
export type BridgeConfig = z.output<typeof bridge>;
export type InstanceNamesConfig = z.output<typeof instanceNames>;
export type AwsClusterConfig = z.output<typeof awsCluster>;
export type OpenstackClusterConfig = z.output<typeof openstackCluster>;

/** Settings whose values are secrets; they are read separately and never validated into plain output. */
export const SECRET_SETTINGS = [
  "oidcClientSecret",
  /** base64 of 32 random bytes (see validate.ts for why not 64); generated when not set. */
  "bindCookieSigningKey",
  /** base64 of 16, 24 or 32 random bytes; generated when not set. */
  "bindCookieEncryptionKey",
  /** PEM certificate and key for bind.tls.source = provided. */
  "bindTlsCertificate",
  "bindTlsKey",
  /** Credentials per anynines service: {<name>: {serviceBroker: {username, password}, backupManager: {…}}}. */
  "anyninesCredentials",
  /** Encrypts the secrets in the deployed bridge's own stacks (its engine's state); see klutch:bridge. */
  "bridgePassphrase",
  /** The text of an AWS shared credentials file for the deployed bridge's S3 state (bridge.state s3://). */
  "bridgeStateCredentials",
] as const;

export const SETTING_KEYS = [...Object.keys(anyImplementation.environmentSchema.shape), ...SECRET_SETTINGS];
