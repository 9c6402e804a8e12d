import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { renderIssues } from "../../lib/config/messages";
import { SETTING_KEYS } from "../../lib/config/schema";
import { validateEnvironment } from "./validate";
import { environmentSchema } from "./schema";
import {
  FAKE_REGISTRY,
  fakeKubeconfig,
  fakePublishedPackages,
  fakeValidationContext,
} from "../../test/helpers/kubeconfig";

/** Files the validator may read; anything else "does not exist". */
const context = fakeValidationContext;

const localFiles = {
  "/project/.klutch/local/control-plane/kubeconfig": fakeKubeconfig("control-plane"),
  "/project/.klutch/local/app-1/kubeconfig": fakeKubeconfig("app-1"),
  "/project/.klutch/local/app-2/kubeconfig": fakeKubeconfig("app-2"),
  "/project/kube/prod.yaml": fakeKubeconfig("prod"),
  "/project/kube/broken.yaml": "clusters: [unclosed",
  "/project/kube/not-kubeconfig.yaml": "hello: world\n",
  // A CA given as a file next to the kubeconfig, and one whose file is missing.
  "/project/kube/file-ca.yaml": fakeKubeconfig("prod").replace(
    /certificate-authority-data: \S+/,
    "certificate-authority: pki/ca.crt",
  ),
  "/project/kube/pki/ca.crt": "-----BEGIN CERTIFICATE-----\n",
  "/project/kube/missing-ca.yaml": fakeKubeconfig("prod").replace(
    /certificate-authority-data: \S+/,
    "certificate-authority: gone.crt",
  ),
};

const valid = (): Record<string, unknown> => ({
  environment: "local",
  controlPlane: { name: "control-plane", infrastructure: "local" },
  appClusters: [
    { name: "app-1", infrastructure: "local" },
    { name: "app-2", infrastructure: "local", networkConnector: { implementation: "noop" } },
  ],
});

function expectIssues(raw: Record<string, unknown>, expected: { path: string; includes: string }[]) {
  const result = validateEnvironment(raw, context(localFiles));
  assert.equal(result.ok, false, "expected the config to be rejected");
  if (result.ok) return;
  for (const e of expected) {
    const hit: { path: string; message: string } | undefined = result.issues.find(
      (i) => i.path === e.path && i.message.includes(e.includes),
    );
    assert.ok(
      hit,
      `no issue at ${e.path} containing "${e.includes}"; got:\n${renderIssues(result.issues, "test")}`,
    );
  }
}

describe("environment config", () => {
  describe("valid configs", () => {
    it("accepts an existing cluster whose kubeconfig names its CA as a file beside it", () => {
      const raw = valid();
      raw.appClusters = [
        {
          name: "prod",
          infrastructure: "existing",
          kubeconfig: { path: "kube/file-ca.yaml" },
          networkConnector: { implementation: "proxy", allowedSources: ["10.50.0.0/16"] },
        },
      ];
      const result = validateEnvironment(raw, context(localFiles));
      assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "t"));
    });

    it("accepts the local stack and fills in the defaults", () => {
      const result = validateEnvironment(valid(), context(localFiles));
      assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "t"));
      const app1 = result.config.appClusters[0];
      assert.deepEqual(app1?.networkConnector, {
        implementation: "proxy",
        serviceType: "LoadBalancer",
        hop: "haproxy",
        publicEndpoint: false,
        portRange: { from: 30000, to: 30999 },
      });
      assert.deepEqual(result.config.oidc, {
        provider: "dex",
        clientId: "klutch-bind",
        image: "ghcr.io/dexidp/dex:v2.41.1",
        storageSize: "1Gi",
        connectors: [],
      });
      assert.deepEqual(
        result.config.exportedApis.map((a) => a.resource),
        ["postgresqlinstances", "servicebindings", "backups", "restores"],
      );
      assert.deepEqual(
        result.config.exportedApis[1]?.permissionClaims.map((c) => c.resource),
        ["secrets", "configmaps"],
      );
    });

    it("accepts the committed stack files as they are", () => {
      const file = path.join(__dirname, "..", "..", "stacks", "Pulumi.local.yaml");
      const doc = parse(fs.readFileSync(file, "utf8")) as { config: Record<string, unknown> };
      const raw = Object.fromEntries(
        Object.entries(doc.config).map(([k, v]) => [k.replace(/^klutch:/, ""), v]),
      );
      // Secrets arrive decrypted in a run: stand in for them (the encrypted form is not a string).
      for (const [k, v] of Object.entries(raw))
        if (v && typeof v === "object" && "secure" in v) raw[k] = "x".repeat(32);
      // As `npm run clusters -- up` leaves the control plane's node: the images it imported.
      const node = JSON.stringify({
        slot: 1,
        nodeName: "control-plane-node",
        podCidr: "10.244.0.0/24",
        apiServerPort: 1,
        images: {
          bridge: "klutch.local/bridge:0.1.0-node24-0123456789ab",
          haproxy: "klutch.local/haproxy:2.6.12-1-0123456789ab",
          crossplane: "klutch.local/crossplane:2.4.0-0123456789ab",
        },
        registry: FAKE_REGISTRY,
      });
      // Each app cluster's node too: its names server runs from the node's bridge and CoreDNS images.
      const appNode = (name: string) =>
        JSON.stringify({
          ...(JSON.parse(node) as object),
          nodeName: `${name}-node`,
          images: {
            bridge: "klutch.local/bridge:0.1.0-node24-0123456789ab",
            coredns: "klutch.local/coredns:1.15.0-0123456789ab",
          },
        });
      const files = {
        ...localFiles,
        "/project/.klutch/local/control-plane/node/node.json": node,
        "/project/.klutch/local/app-1/node/node.json": appNode("app-1"),
        "/project/.klutch/local/app-2/node/node.json": appNode("app-2"),
        // What `up` publishes to the local registry (host/local-clusters/packages).
        ...fakePublishedPackages("/project/.klutch/local"),
      };
      const result = validateEnvironment(raw, context(files));
      assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "local"));
    });

    it("accepts existing clusters, wireguard, keycloak and cloud shapes", () => {
      const result = validateEnvironment(
        {
          environment: "prod",
          controlPlane: {
            name: "cp",
            infrastructure: "aws",
            aws: { region: "eu-central-1", accountId: "111111111111" },
            network: { nodeCidr: "10.0.0.0/16" },
          },
          appClusters: [
            {
              name: "peered",
              infrastructure: "aws",
              aws: { region: "eu-west-1", accountId: "222222222222" },
              network: { nodeCidr: "10.1.0.0/16", podCidr: "10.2.0.0/16" },
              networkConnector: {
                implementation: "awsVpcPeering",
                accepter: { roleArn: "arn:aws:iam::111111111111:role/peering" },
              },
            },
            {
              name: "onprem",
              infrastructure: "existing",
              kubeconfig: { path: "kube/prod.yaml", context: "prod" },
              network: { nodeCidr: "192.168.0.0/24" },
              networkConnector: { implementation: "wireguard", tunnelCidr: "100.96.0.0/24" },
              apis: ["postgresqlinstances", "servicebindings"],
            },
          ],
          oidc: {
            provider: "keycloak",
            issuerUrl: "https://sso.example.com/realms/klutch",
            clientId: "bind",
          },
          oidcClientSecret: "from-pulumi-config-secret",
          bindCookieSigningKey: Buffer.alloc(32, 7).toString("base64"),
          bindCookieEncryptionKey: Buffer.alloc(16, 9).toString("base64"),
          crossplane: {
            version: "1.19.2",
            anyninesServices: [
              {
                name: "postgresql",
                serviceBrokerUrl: "https://a9s-pg-sb.example.com",
                backupManagerUrl: "https://a9s-pg-bm.example.com",
              },
            ],
          },
          anyninesCredentials: {
            postgresql: {
              serviceBroker: { username: "admin", password: "pw" },
              backupManager: { username: "admin", password: "pw2" },
            },
          },
          bind: {
            externalAddress: "https://bind.example.com",
            tls: { source: "cert-manager", issuer: "le" },
          },
        },
        context(localFiles),
      );
      assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "prod"));
    });

    it("declares every setting in Pulumi.yaml with a type and a description", () => {
      const project = parse(fs.readFileSync(path.join(__dirname, "..", "..", "Pulumi.yaml"), "utf8")) as {
        config: Record<string, { type?: string; description?: string }>;
      };
      const declared = Object.keys(project.config)
        .map((k) => k.replace(/^klutch:/, ""))
        .sort();
      assert.deepEqual(declared, [...SETTING_KEYS].sort());
      for (const [key, decl] of Object.entries(project.config)) {
        assert.ok(decl.type, `${key} has no type`);
        assert.ok(decl.description && decl.description.length > 20, `${key} has no description`);
      }
      // Pulumi requires every declared key without a default of every stack ("Stack 'local' is
      // missing configuration value"): only what the schema requires may go without one.
      const required = Object.entries(project.config)
        .filter(([, decl]) => !("default" in decl))
        .map(([k]) => k.replace(/^klutch:/, ""))
        .sort();
      const schemaRequired = Object.entries(environmentSchema.shape)
        .filter(
          ([, field]) =>
            !(field as { safeParse: (v: unknown) => { success: boolean } }).safeParse(undefined).success,
        )
        .map(([k]) => k)
        .sort();
      assert.deepEqual(required, schemaRequired);
    });
  });

  describe("invalid configs name the field and what is allowed", () => {
    const cases: {
      name: string;
      mutate: (c: Record<string, any>) => void;
      path: string;
      includes: string;
    }[] = [
      {
        name: "environment name that is not a DNS label",
        mutate: (c) => (c.environment = "Local_Env"),
        path: "klutch:environment",
        includes: "DNS-1123 label",
      },
      {
        name: "missing control plane",
        mutate: (c) => delete c.controlPlane,
        path: "klutch:controlPlane",
        includes: "is required",
      },
      {
        name: "unknown infrastructure",
        mutate: (c) => (c.controlPlane.infrastructure = "gcp"),
        path: "klutch:controlPlane.infrastructure",
        includes: 'must be one of local, existing, aws, openstack (got "gcp")',
      },
      {
        name: "unknown network connector implementation",
        mutate: (c) => (c.appClusters[0].networkConnector = { implementation: "vpn" }),
        path: "klutch:appClusters[0].networkConnector.implementation",
        includes: "must be one of proxy, wireguard, awsVpcPeering, openstack, noop",
      },
      {
        name: "duplicate cluster names",
        mutate: (c) => (c.appClusters[1].name = "app-1"),
        path: "klutch:appClusters[1].name",
        includes: '"app-1" is already used by klutch:appClusters[0]',
      },
      {
        name: "app cluster named like the control plane",
        mutate: (c) => (c.appClusters[0].name = "control-plane"),
        path: "klutch:appClusters[0].name",
        includes: "already used by klutch:controlPlane",
      },
      {
        name: "proxy port range starting at 0",
        mutate: (c) =>
          (c.appClusters[0].networkConnector = { implementation: "proxy", portRange: { from: 0, to: 10 } }),
        path: "klutch:appClusters[0].networkConnector.portRange.from",
        includes: "must be at least 1 (got 0)",
      },
      {
        name: "proxy port above 65535",
        mutate: (c) =>
          (c.appClusters[0].networkConnector = {
            implementation: "proxy",
            portRange: { from: 30000, to: 70000 },
          }),
        path: "klutch:appClusters[0].networkConnector.portRange.to",
        includes: "must be at most 65535 (got 70000)",
      },
      {
        name: "inverted port range",
        mutate: (c) =>
          (c.appClusters[0].networkConnector = {
            implementation: "proxy",
            portRange: { from: 31000, to: 30000 },
          }),
        path: "klutch:appClusters[0].networkConnector.portRange.from",
        includes: "from must not be greater than to",
      },
      {
        name: "malformed CIDR",
        mutate: (c) => (c.appClusters[0].network = { nodeCidr: "10.0.0.0/33" }),
        path: "klutch:appClusters[0].network.nodeCidr",
        includes: "must be an IPv4 CIDR block",
      },
      {
        name: "CIDR with host bits set",
        mutate: (c) => (c.appClusters[0].network = { nodeCidr: "10.1.2.3/16" }),
        path: "klutch:appClusters[0].network.nodeCidr",
        includes: "network address is 10.1.0.0/16",
      },
      {
        name: "pod CIDR overlapping the node CIDR",
        mutate: (c) => (c.appClusters[0].network = { nodeCidr: "10.0.0.0/16", podCidr: "10.0.128.0/17" }),
        path: "klutch:appClusters[0].network.podCidr",
        includes: "overlaps the cluster's nodeCidr",
      },
      {
        name: "existing cluster without kubeconfig",
        mutate: (c) => (c.appClusters[0] = { name: "prod", infrastructure: "existing" }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: 'is required for infrastructure "existing"',
      },
      {
        name: "kubeconfig file that does not exist",
        mutate: (c) =>
          (c.appClusters[0] = {
            name: "prod",
            infrastructure: "existing",
            kubeconfig: { path: "kube/nope.yaml" },
          }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: "/project/kube/nope.yaml does not exist",
      },
      {
        name: "kubeconfig whose certificate-authority file is missing",
        mutate: (c) =>
          (c.appClusters[0] = {
            name: "prod",
            infrastructure: "existing",
            kubeconfig: { path: "kube/missing-ca.yaml" },
          }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: "the certificate-authority file /project/kube/gone.crt",
      },
      {
        name: "kubeconfig file that does not parse",
        mutate: (c) =>
          (c.appClusters[0] = {
            name: "prod",
            infrastructure: "existing",
            kubeconfig: { path: "kube/broken.yaml" },
          }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: "is not valid YAML",
      },
      {
        name: "YAML file that is not a kubeconfig",
        mutate: (c) =>
          (c.appClusters[0] = {
            name: "prod",
            infrastructure: "existing",
            kubeconfig: { path: "kube/not-kubeconfig.yaml" },
          }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: "has no clusters or contexts",
      },
      {
        name: "kubeconfig context that is not in the file",
        mutate: (c) =>
          (c.appClusters[0] = {
            name: "prod",
            infrastructure: "existing",
            kubeconfig: { path: "kube/prod.yaml", context: "staging" },
          }),
        path: "klutch:appClusters[0].kubeconfig",
        includes: 'context "staging" is not in',
      },
      {
        name: "local cluster that has not been started",
        mutate: (c) => c.appClusters.push({ name: "app-3", infrastructure: "local" }),
        path: "klutch:appClusters[2].infrastructure",
        includes: "npm run clusters -- up",
      },
      {
        name: "AWS VPC peering between local clusters",
        mutate: (c) => (c.appClusters[0].networkConnector = { implementation: "awsVpcPeering" }),
        path: "klutch:appClusters[0].networkConnector.implementation",
        includes: "awsVpcPeering needs an aws app cluster and an aws control plane",
      },
      {
        name: "WireGuard tunnel CIDR overlapping a cluster network",
        mutate: (c) => {
          c.appClusters[0].network = { nodeCidr: "100.96.0.0/16" };
          c.appClusters[0].networkConnector = { implementation: "wireguard", tunnelCidr: "100.96.0.0/24" };
        },
        path: "klutch:appClusters[0].networkConnector.tunnelCidr",
        includes: "overlaps klutch:appClusters[0].network.nodeCidr",
      },
      {
        name: "a WireGuard gateway as a LoadBalancer on a local control plane with a node (no load-balancer controller)",
        mutate: (c) => {
          c.controlPlane.nodes = 1;
          c.appClusters[0].networkConnector = { implementation: "wireguard" };
        },
        path: "klutch:appClusters[0].networkConnector.serviceType",
        includes: "set networkConnector.serviceType to NodePort",
      },
      {
        name: "a NodePort WireGuard gateway whose node address nobody knows",
        mutate: (c) => {
          c.controlPlane = {
            name: "cp",
            infrastructure: "existing",
            kubeconfig: { path: "kube/prod.yaml" },
          };
          c.appClusters[0].networkConnector = {
            implementation: "wireguard",
            serviceType: "NodePort",
            allowedSources: ["10.0.0.0/16"],
          };
        },
        path: "klutch:appClusters[0].networkConnector.serviceType",
        includes: "NodePort needs networkConnector.endpoint",
      },
      {
        name: "app clusters that give the one WireGuard gateway different Service types",
        mutate: (c) => {
          c.controlPlane.nodes = 1;
          c.appClusters[0].networkConnector = { implementation: "wireguard", serviceType: "NodePort" };
          c.appClusters[1].networkConnector = { implementation: "wireguard", endpoint: "192.0.2.1:51820" };
        },
        path: "klutch:appClusters[1].networkConnector.serviceType",
        includes: "so one Service type",
      },
      {
        name: "app clusters with different WireGuard tunnel CIDRs",
        mutate: (c) => {
          c.appClusters[0].networkConnector = { implementation: "wireguard", tunnelCidr: "100.96.0.0/24" };
          c.appClusters[1].networkConnector = { implementation: "wireguard", tunnelCidr: "100.97.0.0/24" };
        },
        path: "klutch:appClusters[1].networkConnector.tunnelCidr",
        includes: "use one tunnel CIDR",
      },
      {
        name: "a WireGuard tunnel CIDR too small for the gateway and its app clusters",
        mutate: (c) => {
          // A /30 has two host addresses: the gateway's and one app cluster's, not two.
          c.appClusters[0].networkConnector = { implementation: "wireguard", tunnelCidr: "100.96.0.0/30" };
          c.appClusters[1].networkConnector = { implementation: "wireguard", tunnelCidr: "100.96.0.0/30" };
        },
        path: "klutch:appClusters[0].networkConnector.tunnelCidr",
        includes: "100.96.0.0/30 has 2 host address(es), but the gateway and 2 app cluster(s) need 3",
      },
      {
        name: "an internet-facing proxy in an app cluster that names no addresses",
        mutate: (c) => {
          c.appClusters.push({
            name: "ext",
            infrastructure: "existing",
            kubeconfig: { path: "kube/file-ca.yaml" },
          });
        },
        path: "klutch:appClusters[2].networkConnector",
        includes: "a LoadBalancer proxy needs to know who may connect",
      },
      {
        name: "a WireGuard gateway reached from an app cluster that names no addresses",
        mutate: (c) => {
          c.appClusters.push({
            name: "ext",
            infrastructure: "existing",
            kubeconfig: { path: "kube/file-ca.yaml" },
            networkConnector: { implementation: "wireguard" },
          });
        },
        path: "klutch:appClusters[2].networkConnector",
        includes:
          "a LoadBalancer WireGuard gateway needs to know who may connect, and this app cluster names no addresses: set networkConnector.allowedSources",
      },
      {
        name: "a WireGuard gateway that admits the world without saying so",
        mutate: (c) =>
          (c.appClusters[0].networkConnector = {
            implementation: "wireguard",
            allowedSources: ["0.0.0.0/0"],
          }),
        path: "klutch:appClusters[0].networkConnector",
        includes:
          "allowedSources 0.0.0.0/0 admits every address; set publicEndpoint: true if that is intended",
      },
      {
        name: "app clusters that disagree on whether the shared WireGuard gateway is public",
        mutate: (c) => {
          c.appClusters[0].networkConnector = { implementation: "wireguard", publicEndpoint: true };
          c.appClusters[1].networkConnector = { implementation: "wireguard" };
        },
        path: "klutch:appClusters[1].networkConnector.publicEndpoint",
        includes: "false differs from true (klutch:appClusters[0].networkConnector.publicEndpoint)",
      },
      {
        name: "a proxy that admits the world without saying so",
        mutate: (c) =>
          (c.appClusters[0].networkConnector = { implementation: "proxy", allowedSources: ["0.0.0.0/0"] }),
        path: "klutch:appClusters[0].networkConnector",
        includes: "admits every address; set publicEndpoint: true if that is intended",
      },
      {
        name: "binding an API that is not exported",
        mutate: (c) => (c.appClusters[0].apis = ["postgresqlinstances", "mysqlinstances"]),
        path: "klutch:appClusters[0].apis[1]",
        includes: '"mysqlinstances" is not an exported API',
      },
      {
        name: "misspelled setting",
        mutate: (c) => (c.appCluster = []),
        path: "klutch:appCluster",
        includes: "did you mean klutch:appClusters?",
      },
      {
        name: "misspelled field",
        mutate: (c) => (c.controlPlane.kubeConfig = { path: "x" }),
        path: "klutch:controlPlane",
        includes: 'unknown field "kubeConfig"',
      },
      {
        name: "aws cluster without its aws block and network",
        mutate: (c) => (c.controlPlane = { name: "control-plane", infrastructure: "aws" }),
        path: "klutch:controlPlane.aws",
        includes: 'is required for infrastructure "aws"',
      },
      {
        name: "aws block on a local cluster",
        mutate: (c) => (c.appClusters[0].aws = { region: "eu-central-1" }),
        path: "klutch:appClusters[0].aws",
        includes: 'is only allowed with infrastructure "aws"',
      },
      {
        name: "keycloak without an issuer",
        mutate: (c) => (c.oidc = { provider: "keycloak", clientId: "bind" }),
        path: "klutch:oidc.issuerUrl",
        includes: "is required",
      },
      {
        name: "OIDC issuer over plain http",
        mutate: (c) => (c.oidc = { provider: "dex", issuerUrl: "http://dex.example.com" }),
        path: "klutch:oidc.issuerUrl",
        includes: "must use https://",
      },
      {
        name: "an API exported twice",
        mutate: (c) =>
          (c.exportedApis = [
            { group: "anynines.com", version: "v1", resource: "postgresqlinstances" },
            { group: "anynines.com", version: "v1", resource: "postgresqlinstances" },
          ]),
        path: "klutch:exportedApis[1].resource",
        includes: "is exported twice",
      },
      {
        name: "peering across accounts without accepter credentials",
        mutate: (c) => {
          c.controlPlane = {
            name: "control-plane",
            infrastructure: "aws",
            aws: { region: "eu-central-1", accountId: "111111111111" },
            network: { nodeCidr: "10.0.0.0/16" },
          };
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "aws",
              aws: { region: "eu-central-1", accountId: "222222222222" },
              network: { nodeCidr: "10.1.0.0/16" },
              networkConnector: { implementation: "awsVpcPeering" },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.accepter",
        includes: "is required when peering across accounts",
      },
      {
        name: "peered VPCs with overlapping CIDRs",
        mutate: (c) => {
          c.controlPlane = {
            name: "control-plane",
            infrastructure: "aws",
            aws: { region: "eu-central-1" },
            network: { nodeCidr: "10.0.0.0/16" },
          };
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "aws",
              aws: { region: "eu-central-1" },
              network: { nodeCidr: "10.0.0.0/20" },
              networkConnector: { implementation: "awsVpcPeering" },
            },
          ];
        },
        path: "klutch:appClusters[0].network.nodeCidr",
        includes: "overlaps the data-service network 10.0.0.0/16",
      },
      {
        name: "two NodePort proxies with overlapping port ranges",
        mutate: (c) => {
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: {
                implementation: "proxy",
                serviceType: "NodePort",
                portRange: { from: 31000, to: 31099 },
              },
            },
            {
              name: "app-2",
              infrastructure: "local",
              networkConnector: {
                implementation: "proxy",
                serviceType: "NodePort",
                portRange: { from: 31050, to: 31149 },
              },
            },
          ];
        },
        path: "klutch:appClusters[1].networkConnector.portRange",
        includes:
          "31050-31149 overlaps klutch:appClusters[0].networkConnector.portRange (31000-31099); NodePort proxies share",
      },
      {
        name: "a proxy with a fractional number of dedicated CPUs",
        mutate: (c) => {
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: { implementation: "proxy", dedicatedCpus: 1.5 },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.dedicatedCpus",
        includes: "must be a whole number (got a fraction)",
      },
      {
        name: "a kernel hop with dedicated CPUs (it runs no HAProxy pods)",
        mutate: (c) => {
          c.controlPlane.nodes = 1;
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: {
                implementation: "proxy",
                hop: "kernel",
                serviceType: "ClusterIP",
                dedicatedCpus: 2,
              },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.dedicatedCpus",
        includes: 'hop "kernel" runs none',
      },
      {
        name: "a NodePort kernel hop that is not meant to be public (kube-proxy filters no node port's sources)",
        mutate: (c) => {
          c.controlPlane.nodes = 1;
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: { implementation: "proxy", hop: "kernel", serviceType: "NodePort" },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.hop",
        includes: '"kernel" with serviceType NodePort would admit every address that reaches a node',
      },
      {
        name: "a kernel hop on a local control plane without a node (no kube-proxy)",
        mutate: (c) => {
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: { implementation: "proxy", hop: "kernel", serviceType: "ClusterIP" },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.hop",
        includes: "has none (nodes: 0); set its nodes: 1, or hop: haproxy",
      },
      {
        name: "an unknown hop",
        mutate: (c) => {
          c.appClusters = [
            {
              name: "app-1",
              infrastructure: "local",
              networkConnector: { implementation: "proxy", hop: "ebpf" },
            },
          ];
        },
        path: "klutch:appClusters[0].networkConnector.hop",
        includes: "haproxy",
      },
      {
        name: "a cookie signing key of the wrong length",
        mutate: (c) => (c.bindCookieSigningKey = Buffer.alloc(20, 1).toString("base64")),
        path: "klutch:bindCookieSigningKey",
        includes: "must decode to 32 bytes",
      },
      {
        // The backend documents 64, but its encryption-key check tests the signing key (cookie.go).
        name: "a 64-byte cookie signing key, which the backend refuses beside an encryption key",
        mutate: (c) => (c.bindCookieSigningKey = Buffer.alloc(64, 1).toString("base64")),
        path: "klutch:bindCookieSigningKey",
        includes: "decodes to 64",
      },
      {
        name: "a plain-http backend address, echoed",
        mutate: (c) => (c.bind = { externalAddress: "http://bind.example.com" }),
        path: "klutch:bind.externalAddress",
        includes: 'must use https:// (got "http://bind.example.com")',
      },
      {
        name: "two backend replicas (no leader election upstream)",
        mutate: (c) => (c.bind = { replicas: 2 }),
        path: "klutch:bind.replicas",
        includes: "must be 1 (got 2): the klutch-bind backend has no leader election",
      },
      {
        // The reach is derived from the contract: the default APIs claim secrets and configmaps.
        name: "the Cluster consumer scope, which would give every app cluster every namespace",
        mutate: (c) => (c.bind = { consumerScope: "Cluster" }),
        path: "klutch:bind.consumerScope",
        includes:
          '"Cluster" is refused: the klutch-bind backend then binds ClusterRole klutch-binder-<namespace> cluster-wide',
      },
      {
        name: "the Cluster consumer scope names what it would open: claimed secrets, every bound API",
        mutate: (c) => (c.bind = { consumerScope: "Cluster" }),
        path: "klutch:bind.consumerScope",
        includes:
          "could get, list, create, update and delete backups.anynines.com, postgresqlinstances.anynines.com, restores.anynines.com, servicebindings.anynines.com, configmaps, secrets in every namespace",
      },
      {
        name: "an authorize URL that is not https",
        mutate: (c) => (c.bind = { authorizeUrl: "http://bind.example.com/authorize" }),
        path: "klutch:bind.authorizeUrl",
        includes: "https",
      },
      {
        name: "a klutch-bind release the project does not know",
        mutate: (c) => (c.bind = { version: "v1.6.0" }),
        path: "klutch:bind.version",
        includes: "v1.4.0",
      },
      {
        name: "a cookie encryption key that is not base64",
        mutate: (c) => (c.bindCookieEncryptionKey = "not base64!"),
        path: "klutch:bindCookieEncryptionKey",
        includes: "must be base64 text",
      },
      {
        name: "an unpinned provider package",
        mutate: (c) =>
          (c.crossplane = { providerKubernetes: "xpkg.upbound.io/crossplane-contrib/provider-kubernetes" }),
        path: "klutch:crossplane.providerKubernetes",
        includes:
          'must be a pinned package reference such as xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1 (got "xpkg.upbound.io/crossplane-contrib/provider-kubernetes")',
      },
      {
        name: "two nodes on a local cluster",
        mutate: (c) => (c.controlPlane = { name: "control-plane", infrastructure: "local", nodes: 2 }),
        path: "klutch:controlPlane.nodes",
        includes: "a local cluster has at most one node",
      },
      {
        name: "nodes on a cluster that is not local",
        mutate: (c) =>
          (c.appClusters = [
            { name: "app-1", infrastructure: "existing", kubeconfig: { path: "kube/prod.yaml" }, nodes: 1 },
          ]),
        path: "klutch:appClusters[0].nodes",
        includes: 'is only for infrastructure "local"',
      },
      {
        name: "a Crossplane newer than the toolchain knows",
        mutate: (c) => (c.crossplane = { version: "2.5.0" }),
        path: "klutch:crossplane.version",
        includes: "must be a Crossplane 2.0.x to 2.4.x version, or 1.17.x to 1.20.x",
      },
      {
        name: "Crossplane v2 for a core run as a process",
        mutate: (c) => (c.crossplane = { version: "2.0.0", runLocally: true }),
        path: "klutch:crossplane.version",
        includes: "runs only Crossplane 1.x here",
      },
      {
        name: "an anynines service without credentials",
        mutate: (c) =>
          (c.crossplane = {
            anyninesServices: [{ name: "postgresql", serviceBrokerUrl: "https://a9s.example.com" }],
          }),
        path: "klutch:crossplane.anyninesServices[0]",
        includes: "klutch:anyninesCredentials.postgresql.serviceBroker.username",
      },
      {
        name: "provided TLS without the certificate",
        mutate: (c) => (c.bind = { tls: { source: "provided" } }),
        path: "klutch:bindTlsCertificate",
        includes: 'is required when bind.tls.source is "provided"',
      },
      {
        name: "a backend address over plain http",
        mutate: (c) => (c.bind = { externalAddress: "http://bind.example.com" }),
        path: "klutch:bind.externalAddress",
        includes: "must use https://",
      },
    ];

    for (const c of cases) {
      it(`rejects ${c.name}`, () => {
        const raw = valid();
        c.mutate(raw);
        expectIssues(raw, [{ path: c.path, includes: c.includes }]);
      });
    }

    it("reports every problem of a config in one message", () => {
      const raw = valid() as Record<string, any>;
      raw.environment = "BAD";
      raw.appClusters[0].networkConnector = { implementation: "vpn" };
      raw.appClusters[1].name = "app-1";
      raw.appClusters.push({
        name: "app-9",
        infrastructure: "existing",
        networkConnector: { implementation: "noop" },
      });
      const result = validateEnvironment(raw, context(localFiles));
      assert.equal(result.ok, false);
      if (result.ok) return;
      const message = renderIssues(result.issues, "local");
      assert.match(message, /^Invalid configuration for stack "local" \(4 problems\):/);
      for (const p of [
        "klutch:environment",
        "klutch:appClusters[0].networkConnector.implementation",
        "klutch:appClusters[1].name",
        "klutch:appClusters[2].kubeconfig",
      ]) {
        assert.ok(message.includes(`  - ${p}: `), `${p} missing from:\n${message}`);
      }
      assert.match(message, /nothing was created or changed/);
    });

    it("never echoes a secret setting in an error", () => {
      const raw = { ...valid(), oidcClientSecret: "s3cr3t-value", environment: "BAD" };
      const result = validateEnvironment(raw, context(localFiles));
      assert.equal(result.ok, false);
      if (!result.ok) assert.ok(!renderIssues(result.issues, "x").includes("s3cr3t-value"));
    });
  });

  it("the configuration doc's table lists every setting", () => {
    const doc = fs.readFileSync(path.join(__dirname, "..", "..", "docs", "configuration.md"), "utf8");
    const missing = SETTING_KEYS.filter((k) => !doc.includes(`\`klutch:${k}\``));
    assert.deepEqual(missing, [], "settings docs/configuration.md does not describe");
  });
});
