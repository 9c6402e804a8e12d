import { BIND_RELEASES } from "../../../lib/bind/upstream/release";
import { INFRASTRUCTURES } from "../../../lib/config/schema";
import { IMPLEMENTATIONS, IMPLEMENTATION_NAMES } from "../../../network/registry";
import type { ComponentSpec, ObjectType, Prop } from "../../../providers/kit/schema-model";
import { bool, int, list, map, ref, secret, str } from "../../../providers/kit/props";

/**
 * The whole Klutch environment from one typed args object: the config model (lib/config/
 * schema.ts, the stack's `klutch:` settings) as schema types, one for one, its unions (a
 * network connector, the OIDC provider, bind TLS) as one object whose discriminator says which
 * fields apply. The secret settings are separate secret inputs. programs/klutch-provider/construct/environment.test.ts
 * fails when a setting of the config model has no property here, or the other way round.
 */

const s = (description: string, values?: readonly string[]) =>
  str(description, values ? { enum: values } : {});
const CIDRS = (description: string) => list(str("CIDR"), description);

/** What the control plane and the app clusters both have (the config model's clusterFields). */
const CLUSTER_FIELDS = {
  name: s("A DNS-1123 label, unique among the clusters."),
  infrastructure: s("Where it runs.", INFRASTRUCTURES),
  kubeconfig: ref("klutch:index:KubeconfigSource", "Its kubeconfig (existing; adopted clusters)."),
  aws: ref("klutch:index:AwsCluster", "infrastructure aws."),
  openstack: ref("klutch:index:OpenstackCluster", "infrastructure openstack."),
  network: ref("klutch:index:ClusterNetwork", "Its networks."),
  nodes: int("Local clusters: 1 runs a node so pods start; 0 (default) an API server alone."),
};

/**
 * The network connector: `implementation`, then every registered implementation's fields (its
 * provider surface's `connectorFields`), each once, so a new implementation's settings reach the
 * schema from its own folder. A field several implementations take is described once per
 * description, prefixed with the names that give it; its values are the union of theirs.
 */
function networkConnectorType(): ObjectType {
  const fields = new Map<string, { prop: Prop; said: Map<string, string[]> }>();
  const byImplementation = IMPLEMENTATIONS.map((impl) => {
    const own = impl.pulumi.provider?.().connectorFields ?? {};
    for (const [key, prop] of Object.entries(own)) {
      const seen = fields.get(key) ?? { prop, said: new Map<string, string[]>() };
      fields.set(key, seen);
      if (shapeOf(prop) !== shapeOf(seen.prop))
        throw new Error(
          `networkConnector.${key}: ${impl.name} declares another type than the others that take it`,
        );
      const values = enumOf(prop);
      const seenValues = enumOf(seen.prop);
      if (values && seenValues)
        seen.prop = { ...seen.prop, enum: [...new Set([...seenValues, ...values])] } as Prop;
      seen.said.set(prop.description, [...(seen.said.get(prop.description) ?? []), impl.name]);
    }
    const keys = Object.keys(own);
    return `${impl.name}: ${keys.length > 0 ? keys.join(", ") : "none"}`;
  });
  const properties: Record<string, Prop> = {
    implementation: s("The implementation. Default proxy.", IMPLEMENTATION_NAMES),
  };
  for (const [key, { prop, said }] of fields) {
    const description = [...said].map(([text, names]) => `${names.join(", ")}: ${text}`).join(" ");
    properties[key] = { ...prop, description };
  }
  return {
    description: `How an app cluster's consumers reach the data services: \`implementation\` picks one; only that implementation's fields apply (${byImplementation.join("; ")}).`,
    properties,
    required: [],
  };
}

const enumOf = (prop: Prop): readonly string[] | undefined => (prop as { enum?: readonly string[] }).enum;
/** A property without what may differ between the implementations that take it. */
const shapeOf = (prop: Prop): string => JSON.stringify({ ...prop, description: undefined, enum: undefined });

export const environmentTypes: Record<string, ObjectType> = {
  "klutch:index:KubeconfigSource": {
    description: "A kubeconfig file (infrastructure existing, or an adopted cloud cluster).",
    properties: {
      path: s("Path of the file, absolute or relative to projectDir."),
      context: s("Context to use; the file's current-context when omitted."),
    },
    required: ["path"],
  },
  "klutch:index:ClusterNetwork": {
    description: "A cluster's networks.",
    properties: {
      nodeCidr: s("The cluster's own network: its VPC, OpenStack subnet or node network."),
      podCidr: s("Pod network."),
      serviceCidr: s("Service network."),
      egressCidrs: CIDRS("Where the cluster's traffic leaves from when that is not nodeCidr (NAT gateways)."),
    },
    required: ["nodeCidr"],
  },
  "klutch:index:AwsNodeGroup": {
    description: "The EKS node group.",
    properties: {
      instanceType: s("Default m6i.large."),
      minSize: int("Default 2."),
      desiredSize: int("Default 2."),
      maxSize: int("Default 4."),
    },
    required: [],
  },
  "klutch:index:AwsCluster": {
    description:
      "An EKS cluster (infrastructure aws). Credentials come from the environment (AWS_* or a profile).",
    properties: {
      region: s("AWS region, e.g. eu-central-1."),
      accountId: s("12-digit account id."),
      roleArn: s("Role the AWS provider assumes for this cluster's account."),
      availabilityZoneCount: int("Default 2."),
      kubernetesVersion: s(
        "Kubernetes minor version, 1.35 or later (older minors are past their upstream end of life). Default 1.35.",
      ),
      nodeGroup: ref("klutch:index:AwsNodeGroup", "The node group."),
      existingVpcId: s("Adopt an existing VPC."),
      existingClusterName: s("Adopt an existing EKS cluster (needs existingVpcId)."),
      existingRouteTableIds: list(str("id"), "With existingVpcId: route tables that get peering routes."),
      existingSubnetIds: list(
        str("id"),
        "With existingVpcId and no existingClusterName: private subnets for EKS.",
      ),
    },
    required: ["region"],
  },
  "klutch:index:OpenstackExistingNetwork": {
    description: "An existing OpenStack network to adopt.",
    properties: { networkId: s("Network id."), subnetId: s("Subnet id."), routerId: s("Router id.") },
    required: ["networkId", "subnetId", "routerId"],
  },
  "klutch:index:OpenstackCluster": {
    description: "A Magnum cluster (infrastructure openstack). Credentials come from OS_* or clouds.yaml.",
    properties: {
      region: s("OpenStack region."),
      externalNetworkId: s("The external (floating IP) network."),
      image: s("Default fedora-coreos-40."),
      flavor: s("Default m1.large."),
      masterFlavor: s("Default m1.medium."),
      nodeCount: int("Default 2."),
      dnsNameservers: list(str("IPv4"), "DNS servers of the subnet."),
      keypair: s("Nova keypair."),
      kubernetesVersion: s(
        "kube_tag of the Magnum template, e.g. v1.35.2; a minor below 1.35 is refused (past its upstream end of life).",
      ),
      existingNetwork: ref("klutch:index:OpenstackExistingNetwork", "Adopt this network."),
      gatewayImage: s("WireGuard gateway VM image. Default debian-12."),
      gatewayFlavor: s("WireGuard gateway VM flavor. Default m1.small."),
      gatewayPackageMirrors: list(
        str("CIDR"),
        "CIDRs the gateway VM may reach on 80/443 to install its packages at first boot. Default [0.0.0.0/0]; [] when gatewayImage has them.",
      ),
    },
    required: ["externalNetworkId"],
  },
  "klutch:index:ControlPlane": {
    description: "The control plane cluster (Crossplane, the bind backend; the data-service network).",
    properties: {
      ...CLUSTER_FIELDS,
      dataServiceCidr: s("The data-service network, when it is not the control plane's own."),
    },
    required: ["name", "infrastructure"],
  },
  "klutch:index:NetworkConnector": networkConnectorType(),
  "klutch:index:AppCluster": {
    description: "An app cluster: where the data services are consumed.",
    properties: {
      ...CLUSTER_FIELDS,
      networkConnector: ref("klutch:index:NetworkConnector", "Its network path. Default the proxy."),
      apis: list(str("resource"), "Exported APIs it binds, by resource; all when omitted."),
      bindSubject: s(
        "The OIDC subject (sub) of whoever runs `kubectl bind` for it; its consumer namespace is filed under that identity.",
      ),
    },
    required: ["name", "infrastructure"],
  },
  "klutch:index:Oidc": {
    description:
      "The OIDC provider: dex (default; issuerUrl, clientId, image, storageSize, connectors) or keycloak (issuerUrl, clientId; its client secret is oidcClientSecret).",
    properties: {
      provider: s("Default dex.", ["dex", "keycloak"]),
      issuerUrl: s("Issuer (https); dex: <bind.externalAddress>/dex when omitted."),
      clientId: s("Client id; dex default klutch-bind."),
      image: s("dex: image. Default ghcr.io/dexidp/dex:v2.41.1."),
      storageSize: s("dex: SQLite volume size, e.g. 1Gi."),
      connectors: list(ref("klutch:bind:DexConnector", "connector"), "dex: connectors."),
    },
    required: [],
  },
  "klutch:index:LocalClusters": {
    description: "Where `npm run clusters -- up` keeps the local clusters.",
    properties: { stateDir: s("Relative to projectDir. Default .klutch/local.") },
    required: [],
  },
  "klutch:index:CrossplaneSettings": {
    description: "Crossplane core and Klutch's packages.",
    properties: {
      version: s(
        "2.0.x to 2.4.x, or 1.17.x to 1.20.x (upstream Klutch's line). Default 2.4.0; 1.20.11 where core runs as a process (runLocally).",
      ),
      image: s(
        "Crossplane core's image, with a tag. Default the chart's (xpkg.crossplane.io/crossplane/crossplane:v<version>), or imageRegistry's copy of it.",
      ),
      chartRepository: s("Helm repository. Default https://charts.crossplane.io/stable."),
      chartPath: s("A local chart folder."),
      providerKubernetes: s("Pinned package."),
      providerAnynines: s("Pinned package."),
      functionPatchAndTransform: s("Pinned package."),
      dataservicesConfiguration: s("Pinned package."),
      functionKlutch: s(
        "Klutch's composition function, pinned (the release's function-klutch-v<version>.xpkg in your registry); with it, the network-aware ServiceBinding compositions for a8s. Not on local clusters.",
      ),
      anyninesServices: list(
        ref("klutch:crossplane:AnyninesService", "service"),
        "anynines service brokers.",
      ),
      runLocally: bool(
        "Run Crossplane core as a process on this machine; default true on a local control plane without a node, else false (on a local node the chart's pods run from its klutch.local/crossplane image).",
      ),
      useInstalled: bool(
        "On an existing control plane: use the Crossplane core already installed there (of version's minor, in crossplane-system, with SSA claims on) and install only Klutch's packages; destroy leaves the core. Default false.",
      ),
    },
    required: [],
  },
  "klutch:index:BindTls": {
    description:
      "TLS of the backend: cert-manager (issuer, issuerKind) or provided (bindTlsCertificate, bindTlsKey).",
    properties: {
      source: s("Where the certificate comes from.", ["cert-manager", "provided"]),
      issuer: s("cert-manager issuer."),
      issuerKind: s("Default ClusterIssuer.", ["Issuer", "ClusterIssuer"]),
    },
    required: ["source"],
  },
  "klutch:index:BindSettings": {
    description: "The klutch-bind backend and konnectors.",
    properties: {
      externalAddress: s("Where app clusters reach the backend (https)."),
      version: s("The klutch-bind release.", BIND_RELEASES),
      image: s("The backend's image."),
      konnectorImage: s("The konnector's image."),
      authorizeUrl: s("The /authorize URL kubectl bind opens (https)."),
      awaitExports: bool("Wait for the backend to make each APIServiceExport."),
      namespacePrefix: s("Consumer namespace prefix. Default cluster."),
      apiServerAddress: s("The control plane API address konnectors reach (https)."),
      replicas: int("Must be 1."),
      keyRotation: s("Change to make new cookie keys."),
      prettyName: s("Default Klutch."),
      consumerScope: s("Default Namespaced.", ["Namespaced", "Cluster"]),
      exposure: s("Default ingress.", ["ingress", "gateway", "none"]),
      ingressClassName: s("Default nginx."),
      gatewayClassName: s("Default nginx."),
      tls: ref("klutch:index:BindTls", "TLS of the exposure."),
    },
    required: [],
  },
  "klutch:index:BridgeState": {
    description:
      "Where the deployed bridge keeps its groups' Pulumi state: hostPath (a one-node local cluster) or backend (a URL every replica reaches).",
    properties: {
      kind: s("Which kind of state.", ["hostPath", "backend"]),
      path: s("hostPath: an absolute directory on the node."),
      url: s("backend: s3://, gs://, azblob:// or https://."),
    },
    required: ["kind"],
  },
  "klutch:index:BridgeSettings": {
    description: "The Crossplane bridge as a Deployment on the control plane.",
    properties: {
      deploy: bool("Deploy it. Default: when the control plane is local with a node."),
      image: s("The bridge image, pinned (a local node's klutch.local/bridge, else the published one)."),
      replicas: int("Default 2: one leads, the others stand by."),
      state: ref("klutch:index:BridgeState", "Where its stacks' state lives (required off local clusters)."),
      proxyImage: s("HAProxy image of the proxy pods, pinned."),
      awsRoleArn: s(
        "The IAM role its pods assume for state in S3, through EKS's IAM roles for service accounts (its ServiceAccount's eks.amazonaws.com/role-arn).",
      ),
    },
    required: [],
  },
  "klutch:index:InstanceNames": {
    description:
      "Instance names: an instance host in one of the zones keeps its name in a binding's Secret (TLS clients still verify it), and each app cluster's names server answers it with the path's address.",
    properties: {
      zones: list(
        str("zone"),
        "The DNS zones of the instances' names (a9s: its Consul domain). None turns it off.",
      ),
      image: s("The watcher's image, pinned: the bridge image by default."),
      corednsImage: s(
        "The names server's CoreDNS, pinned: a local node's klutch.local/coredns, else kubeadm's.",
      ),
    },
    required: [],
  },
  "klutch:index:BindingInfo": {
    description: "One app cluster's binding.",
    properties: {
      consumerNamespace: s("Its namespace on the control plane."),
      apis: list(str("name"), "The APIs it binds."),
    },
    required: ["consumerNamespace", "apis"],
  },
};

const plainRef = (token: string, description: string) => ref(token, description, true);

export const environmentComponents: ComponentSpec[] = [
  {
    token: "klutch:index:Environment",
    description:
      "A whole Klutch environment from one args object (the stack config of this repository's program): the control plane and app clusters, namespaces, Crossplane, the network connector API, the bridge's settings and identity, OIDC, the bind backend, the exported APIs, each app cluster's binding and the network paths. Everything is checked by the config model's rules before anything is registered.",
    inputs: {
      environment: str("The environment's name (a DNS-1123 label); labels every object.", { plain: true }),
      imageRegistry: str(
        "An operator's registry mirror (host[:port][/path]): every image and Crossplane package that no setting names comes from it, under its repository's own path; an ImageConfig makes Crossplane pull the packages' dependencies from it too. Not with local clusters.",
        { plain: true },
      ),
      controlPlane: plainRef("klutch:index:ControlPlane", "The control plane cluster."),
      appClusters: list(ref("klutch:index:AppCluster", "app cluster"), "The app clusters.", true),
      oidc: plainRef("klutch:index:Oidc", "The OIDC provider. Default dex."),
      exportedApis: list(
        ref("klutch:bind:Api", "api"),
        "The APIs offered for binding. Default the anynines PostgreSQL APIs.",
        true,
      ),
      localClusters: plainRef("klutch:index:LocalClusters", "The local clusters' state."),
      crossplane: plainRef("klutch:index:CrossplaneSettings", "Crossplane."),
      bind: plainRef("klutch:index:BindSettings", "The bind backend."),
      bridge: plainRef("klutch:index:BridgeSettings", "The Crossplane bridge as a Deployment."),
      instanceNames: plainRef(
        "klutch:index:InstanceNames",
        "Instance names in the app clusters. Default none.",
      ),
      projectDir: str(
        "Directory relative paths (kubeconfigs, localClusters.stateDir, chartPath) are resolved against. Default the program's directory.",
        { plain: true },
      ),
      oidcClientSecret: str("The OIDC client secret (required for keycloak). Kept a secret.", {
        secret: true,
      }),
      bindCookieSigningKey: str("base64 of 32 random bytes; generated when omitted. Kept a secret.", {
        secret: true,
      }),
      bindCookieEncryptionKey: str(
        "base64 of 16, 24 or 32 random bytes; generated when omitted. Kept a secret.",
        {
          secret: true,
        },
      ),
      bindTlsCertificate: str("PEM certificate (bind.tls.source provided). Kept a secret.", { secret: true }),
      bindTlsKey: str("PEM key (bind.tls.source provided). Kept a secret.", { secret: true }),
      bridgePassphrase: str(
        "Passphrase of the deployed bridge's own stacks (at least 16 characters; required when it is deployed). Kept a secret.",
        { secret: true },
      ),
      bridgeStateCredentials: str(
        "The text of an AWS shared credentials file ([default] profile) for the deployed bridge's state in S3 (bridge.state s3://); without it, the AWS SDK's default chain in the pods. Kept a secret.",
        { secret: true },
      ),
      anyninesCredentials: secret(
        map(ref("klutch:crossplane:AnyninesCredentials", "credentials"), "Credentials per anynines service."),
      ),
    },
    requiredInputs: ["environment", "controlPlane"],
    outputs: {
      namespaces: map(list(str("namespace"), "namespaces"), "Namespaces created, by cluster."),
      bindExternalAddress: str("Where app clusters reach the bind backend."),
      exportedApis: list(str("name"), "The exported APIs (<resource>.<group>)."),
      bindings: map(ref("klutch:index:BindingInfo", "binding"), "Per app cluster: its binding."),
      controlPlaneKubeconfig: secret(str("The control plane's kubeconfig.")),
      appClusterKubeconfigs: secret(
        map(str("kubeconfig"), "The binder identities' kubeconfigs, by app cluster."),
      ),
    },
    requiredOutputs: [
      "namespaces",
      "bindExternalAddress",
      "exportedApis",
      "bindings",
      "controlPlaneKubeconfig",
      "appClusterKubeconfigs",
    ],
  },
];
