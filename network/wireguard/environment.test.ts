import { strict as assert } from "node:assert";
import { klutchProgram } from "../../programs/stack/program";
import { fakeLocalStateDir } from "../../test/helpers/kubeconfig";
import {
  type MockedRun,
  type Registered,
  SECRET_MARKER,
  SECRET_SIG,
  mockPulumi,
  settle,
} from "../../test/helpers/mocks";
import { stackSettings } from "../../test/helpers/stacks";
import { violations } from "../../programs/policy/rules";
import { wireguardKeyProvider } from "./key-provider";

const KEY_TYPE = "pulumi-nodejs:dynamic/klutch:WireguardKeyPair";

async function drain(): Promise<void> {
  for (let i = 0; i < 6; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
}

const providerName = (r: Registered) => r.provider?.split("::")[3] ?? "";
const isSecret = (v: unknown) =>
  typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_MARKER;

const WIREGUARD_APP = {
  name: "app-1",
  infrastructure: "local",
  networkConnector: { implementation: "wireguard", endpoint: "192.0.2.1:51820" },
};

/** A local environment: the control plane and these app clusters. */
const localConfig = (stateDir: string, appClusters: Record<string, unknown>[]) => ({
  environment: "local",
  controlPlane: { name: "control-plane", infrastructure: "local" },
  appClusters,
  localClusters: { stateDir },
});

describe("the environment deploys the WireGuard tunnel (mocks)", function () {
  this.timeout(60000);

  describe("control plane on Kubernetes (local clusters)", () => {
    let run: MockedRun;
    before(async () => {
      const stateDir = fakeLocalStateDir(["control-plane", "app-1", "app-2"]);
      run = mockPulumi(
        localConfig(stateDir, [WIREGUARD_APP, { name: "app-2", infrastructure: "local" }]),
        "test",
        { dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider } },
      );
      klutchProgram();
      await drain();
    });

    it("creates one tunnel: the gateway pod on the control plane, a client only on the wireguard app cluster", () => {
      assert.equal(run.ofType("klutch:network:WireguardTunnel").length, 1);
      assert.equal(run.ofType("klutch:network:OpenstackWireguardGateway").length, 0);
      const deployments = run
        .ofType("kubernetes:apps/v1:Deployment")
        .filter((d) => d.name.includes("-wireguard-"))
        .map((d) => [d.name.replace(/^.*-wireguard-/, ""), providerName(d), d.inputs.metadata.namespace]);
      assert.deepEqual(deployments.sort(), [
        ["app-1-client-deployment", "local-app-1-provider", "klutch-wireguard"],
        ["gateway-deployment", "local-control-plane-provider", "klutch-network"],
      ]);
      // Its own namespace on app-1, none on app-2 (proxy).
      const ns = run
        .ofType("kubernetes:core/v1:Namespace")
        .filter((n) => n.inputs.metadata.name === "klutch-wireguard")
        .map(providerName);
      assert.deepEqual(ns, ["local-app-1-provider"]);
      // Key pairs from the key provider: the gateway's and app-1's, nobody else's.
      assert.deepEqual(
        run
          .ofType(KEY_TYPE)
          .map((k) => k.name)
          .sort(),
        ["local-wireguard-app-1-key", "local-wireguard-gateway-key"],
      );
      // Local clusters have no kubelet: nothing waits for pods.
      for (const d of run
        .ofType("kubernetes:apps/v1:Deployment")
        .filter((x) => x.name.includes("-wireguard-")))
        assert.equal(d.inputs.metadata.annotations?.["pulumi.com/skipAwait"], "true", d.name);
    });

    it("the client's config is a secret; the gateway filter is rendered and holds no key", () => {
      const secrets = run.ofType("kubernetes:core/v1:Secret").filter((s) => s.name.includes("-wireguard-"));
      assert.equal(secrets.length, 2);
      for (const s of secrets) assert.ok(isSecret(s.inputs.stringData), `${s.name} stringData is secret`);
      const rules = run
        .ofType("kubernetes:core/v1:ConfigMap")
        .find((c) => c.name.endsWith("-wireguard-gateway-rules"));
      assert.ok(rules, "the gateway's nftables rules");
      const nft = rules.inputs.data["rules.nft"] as string;
      assert.match(nft, /table inet klutch_wireguard/);
      assert.doesNotMatch(nft, /PrivateKey/);
      const svc = run
        .ofType("kubernetes:core/v1:Service")
        .find((s) => s.name.endsWith("-wireguard-gateway-service"));
      assert.equal(svc?.inputs.spec.ports[0].protocol, "UDP");
      assert.equal(svc?.inputs.spec.ports[0].port, 51820);
    });
  });

  describe("a slow klutch-network namespace (the first `up` on a new control plane)", () => {
    let run: MockedRun;
    before(async () => {
      const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
      run = mockPulumi(localConfig(stateDir, [WIREGUARD_APP]), "test", {
        dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider },
        // The API server takes its time creating the gateway's namespace.
        delayMs: (args) =>
          args.type === "kubernetes:core/v1:Namespace" &&
          (args.inputs.metadata as { name?: string } | undefined)?.name === "klutch-network"
            ? 300
            : 0,
      });
      klutchProgram();
      for (let i = 0; i < 4; i++) {
        await drain();
        await new Promise((r) => setTimeout(r, 150));
      }
    });

    it("registers none of the gateway's objects before the namespace exists", () => {
      const namespaceDone = run.events.findIndex((e) =>
        /^done kubernetes:core\/v1:Namespace .*-control-plane-klutch-network$/.test(e),
      );
      assert.ok(namespaceDone >= 0, "the namespace was created");
      const gatewayObjects = run.events
        .map((e, i) => [e, i] as const)
        .filter(([e]) =>
          /^start kubernetes:\S+ .*-wireguard-gateway-(service|secret|rules|deployment)$/.test(e),
        );
      assert.equal(gatewayObjects.length, 4, run.events.filter((e) => e.includes("gateway")).join("\n"));
      for (const [e, i] of gatewayObjects) assert.ok(i > namespaceDone, `${e} waits for klutch-network`);
    });
  });

  describe("control plane on AWS (EKS): the gateway behind a load balancer", () => {
    let run: MockedRun;
    before(async () => {
      const settings = stackSettings("aws-example");
      const apps = settings.appClusters as Record<string, any>[];
      // app-1 names its egress (NAT) address; app-2 is reached from its nodes' private network.
      apps[0]!.network.egressCidrs = ["198.51.100.7/32"];
      apps[0]!.networkConnector = { implementation: "wireguard", dataServicePorts: [5432] };
      apps[1]!.networkConnector = { implementation: "wireguard", dataServicePorts: [5432] };
      run = mockPulumi(settings, "aws-example", { dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider } });
      klutchProgram();
      await drain();
    });

    it("admits exactly the app clusters' clients: app-1's egress and app-2's nodes, on an internet-facing load balancer", () => {
      const svc = run
        .ofType("kubernetes:core/v1:Service")
        .find((s) => s.name.endsWith("-wireguard-gateway-service"));
      assert.ok(svc, "the gateway Service");
      assert.equal(svc.inputs.spec.type, "LoadBalancer");
      assert.deepEqual(svc.inputs.spec.loadBalancerSourceRanges, ["198.51.100.7/32", "10.30.0.0/16"]);
      // One source is public, so the load balancer cannot be internal.
      assert.equal(
        svc.inputs.metadata.annotations?.["service.beta.kubernetes.io/aws-load-balancer-scheme"],
        undefined,
      );
      assert.deepEqual(
        violations(run.resources.map((r) => ({ type: r.type, props: r.inputs }))),
        [],
        "the stack passes the policy pack",
      );
    });

    it("with klutch:imageRegistry, every image the program deploys comes from the mirror: every workload's containers, Crossplane's chart and packages", async () => {
      const settings = stackSettings("aws-example");
      settings.imageRegistry = "mirror.example.com";
      const apps = settings.appClusters as Record<string, any>[];
      // An endpoint given: the pods do not wait for the load balancer's address, which mocks never give.
      apps[1]!.networkConnector = {
        implementation: "wireguard",
        endpoint: "192.0.2.1:51820",
        dataServicePorts: [5432],
      };
      const own = mockPulumi(settings, "aws-example", {
        dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider },
      });
      klutchProgram();
      // The tunnel's Deployments wait for its keys (a dynamic provider's outputs).
      const deployed = (suffix: string) => own.resources.some((r) => r.name.endsWith(suffix));
      for (let i = 0; i < 50 && !(deployed("-gateway-deployment") && deployed("-client-deployment")); i++)
        await drain();
      const workloads = own.resources.filter((r) =>
        /^kubernetes:apps\/v1:(Deployment|DaemonSet|StatefulSet)$|^kubernetes:core\/v1:Pod$/.test(r.type),
      );
      const images = workloads.flatMap((w) => {
        const spec = w.type === "kubernetes:core/v1:Pod" ? w.inputs.spec : w.inputs.spec?.template?.spec;
        return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map(
          (c: { image: string }) => `${w.name}: ${c.image}`,
        );
      });
      assert.ok(
        images.some((i) => i.includes("-wireguard-gateway")),
        images.join("\n"),
      );
      assert.ok(
        images.some((i) => /mirror\.example\.com\/dexidp\/dex:/.test(i)),
        images.join("\n"),
      );
      assert.deepEqual(
        images.filter((i) => !/: mirror\.example\.com\//.test(i)),
        [],
        "no workload image from anywhere but the mirror",
      );
      const chart = own.ofType("kubernetes:helm.sh/v4:Chart")[0];
      assert.equal(chart?.inputs.values.image.repository, "mirror.example.com/crossplane/crossplane");
      const packages = own.resources.filter((r) => /^kubernetes:pkg\.crossplane\.io\/v1:/.test(r.type));
      assert.ok(packages.length >= 4);
      // Each from the mirror but the one the stack names itself (its functionKlutch, in its own ECR).
      for (const p of packages)
        assert.match(
          p.inputs.spec.package,
          p.inputs.metadata.name === "function-klutch" ? /\.dkr\.ecr\./ : /^mirror\.example\.com\//,
          p.name,
        );
      assert.equal(own.ofType("kubernetes:pkg.crossplane.io/v1beta1:ImageConfig").length, 1);
    });

    it("an internal load balancer when every client is on a private network", async () => {
      const settings = stackSettings("aws-example");
      const apps = settings.appClusters as Record<string, any>[];
      apps[1]!.networkConnector = { implementation: "wireguard", dataServicePorts: [5432] };
      const own = mockPulumi(settings, "aws-example", {
        dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider },
      });
      klutchProgram();
      await drain();
      const svc = own
        .ofType("kubernetes:core/v1:Service")
        .find((s) => s.name.endsWith("-wireguard-gateway-service"));
      assert.deepEqual(svc?.inputs.spec.loadBalancerSourceRanges, ["10.30.0.0/16"]);
      assert.equal(
        svc?.inputs.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"],
        "internal",
      );
    });
  });

  describe("control plane on OpenStack", () => {
    let run: MockedRun;
    before(async () => {
      const settings = stackSettings("openstack-example");
      const apps = settings.appClusters as { name: string; networkConnector?: Record<string, unknown> }[];
      apps[1]!.networkConnector = { implementation: "wireguard" };
      run = mockPulumi(settings, "openstack-example", {
        dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider },
      });
      klutchProgram();
      await drain();
    });

    it("runs the gateway as a VM whose floating IP the client dials, and a client on app-2 only", () => {
      assert.equal(run.ofType("klutch:network:WireguardTunnel").length, 1);
      assert.equal(run.ofType("klutch:network:OpenstackWireguardGateway").length, 1);
      const vms = run.ofType("openstack:compute/instance:Instance");
      assert.equal(vms.length, 1);
      assert.ok(isSecret(vms[0]!.inputs.userData), "the VM's cloud-init (holding the key) is secret");
      const userData = (vms[0]!.inputs.userData as { value: string }).value;
      // The gateway knows app-2's client and listens where the client dials.
      assert.match(userData, /# app cluster app-2\s+\[Peer\]/);
      assert.match(userData, /ListenPort = 51820/);
      // No gateway pod: the VM is the gateway.
      const deployments = run
        .ofType("kubernetes:apps/v1:Deployment")
        .filter((d) => d.name.includes("-wireguard-"))
        .map((d) => d.name.replace(/^.*-wireguard-/, ""));
      assert.deepEqual(deployments, ["app-2-client-deployment"]);
      const fips = run.ofType("openstack:networking/floatingIp:FloatingIp").map((f) => f.name);
      assert.ok(
        fips.some((n) => n.endsWith("-wireguard-gateway-address")),
        fips.join(", "),
      );
      assert.ok(!fips.some((n) => n.endsWith("-wireguard-gateway-fip")), "the reserved address is reused");
      const assoc = run.ofType("openstack:networking/floatingIpAssociate:FloatingIpAssociate");
      assert.ok(assoc.some((a) => a.name.endsWith("-wireguard-gateway-fip-associate")));
    });

    it("gives the VM the bridge's flows: a reader that may get only the flows ConfigMap, its token in the secret cloud-init, egress to the API port only", () => {
      const maps = run.ofType("kubernetes:core/v1:ConfigMap");
      const flows = maps.find((c) => c.inputs.metadata?.name?.endsWith("-wireguard-gateway-flows"));
      assert.ok(flows, maps.map((m) => m.inputs.metadata?.name).join(", "));
      assert.equal(flows.inputs.metadata.namespace, "klutch-network");
      assert.equal(flows.inputs.data, undefined);
      const role = run
        .ofType("kubernetes:rbac.authorization.k8s.io/v1:Role")
        .find((r) => r.name.endsWith("-flows-reader-role"));
      assert.deepEqual(role?.inputs.rules, [
        {
          apiGroups: [""],
          resources: ["configmaps"],
          resourceNames: [flows.inputs.metadata.name],
          verbs: ["get"],
        },
      ]);
      const vm = run.ofType("openstack:compute/instance:Instance")[0]!;
      const userData = (vm.inputs.userData as { value: string }).value;
      assert.match(userData, /klutch-flows-sync\.service/);
      assert.match(
        userData,
        new RegExp(
          `--server https://[^ ]+\\.magnum\\.example\\.test:6443 --namespace klutch-network --name ${flows.inputs.metadata.name}`,
        ),
      );
      assert.match(userData, /include "\/etc\/klutch\/flows\/flows-\*\.nft"/);
      assert.match(userData, /ExecStart=\/usr\/bin\/socat 'TCP-LISTEN:51821,fork,reuseaddr'/);
      const egress = run
        .ofType("openstack:networking/secGroupRule:SecGroupRule")
        .find((r) => r.name.endsWith("-gateway-egress-api"));
      // The API is named by a host name here, so its port to any address: nothing else.
      assert.deepEqual(
        [egress?.inputs.direction, egress?.inputs.portRangeMin, egress?.inputs.remoteIpPrefix],
        ["egress", 6443, "0.0.0.0/0"],
      );
      // cloud-init installs the packages at first boot: the web ports out, nothing else.
      const packages = run
        .ofType("openstack:networking/secGroupRule:SecGroupRule")
        .filter((r) => r.name.includes("-gateway-egress-packages-"))
        .map((r) => [r.inputs.direction, r.inputs.portRangeMin, r.inputs.remoteIpPrefix]);
      assert.deepEqual(packages.sort(), [
        ["egress", 443, "0.0.0.0/0"],
        ["egress", 80, "0.0.0.0/0"],
      ]);
      assert.match(userData, /packages:\n\s+- wireguard/);
      // The bridge's settings name the same ConfigMap for app-2's consumer namespace.
      const settings = maps.find((c) => c.inputs.metadata?.name === "klutch-bridge-settings");
      const consumers = JSON.parse(settings?.inputs.data["settings.json"]).consumers as Record<
        string,
        { wireguard?: { flows: unknown } }
      >;
      const wg = Object.values(consumers).find((c) => c.wireguard);
      assert.deepEqual(wg?.wireguard?.flows, {
        namespace: "klutch-network",
        name: flows.inputs.metadata.name,
      });
    });

    it("an image with the packages already (gatewayPackageMirrors: []): nothing installed, no web egress", async () => {
      const settings = stackSettings("openstack-example");
      const apps = settings.appClusters as { name: string; networkConnector?: Record<string, unknown> }[];
      apps[1]!.networkConnector = { implementation: "wireguard" };
      const cp = settings.controlPlane as { openstack: Record<string, unknown> };
      cp.openstack.gatewayPackageMirrors = [];
      const own = mockPulumi(settings, "openstack-example", {
        dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider },
      });
      klutchProgram();
      await drain();
      const vm = own.ofType("openstack:compute/instance:Instance")[0]!;
      assert.doesNotMatch((vm.inputs.userData as { value: string }).value, /packages:/);
      assert.deepEqual(
        own
          .ofType("openstack:networking/secGroupRule:SecGroupRule")
          .filter((r) => r.name.includes("-egress-packages-")),
        [],
      );
    });

    it("admits WireGuard's UDP port only from app-2's network and the data ports only from the gateway", () => {
      const rules = run
        .ofType("openstack:networking/secGroupRule:SecGroupRule")
        .filter((r) => r.name.includes("-wireguard-gateway"));
      const udp = rules.filter((r) => r.inputs.protocol === "udp");
      assert.deepEqual(
        udp.map((r) => [r.inputs.portRangeMin, r.inputs.remoteIpPrefix]),
        [[51820, "10.42.0.0/24"]],
      );
      const data = rules.filter((r) => r.name.includes("-data-services") && r.inputs.protocol === "tcp");
      assert.deepEqual(
        data.map((r) => [r.inputs.portRangeMin, r.inputs.remoteIpPrefix]),
        [[5432, "10.40.0.248/32"]],
      );
    });
  });
});
