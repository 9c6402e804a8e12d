import { strict as assert } from "node:assert";
import { renderIssues } from "../../lib/config/messages";
import { validateEnvironment } from "./validate";
import { fakeKubeconfig, fakeValidationContext } from "../../test/helpers/kubeconfig";
import { stackSettings } from "../../test/helpers/stacks";
import { crossplaneImages } from "../environment-parts/crossplane-images";

const files: Record<string, string> = {
  "/project/kube/magnum.yaml": fakeKubeconfig("magnum"),
  // stacks/Pulumi.existing-example.yaml's clusters, as their operators hand them over.
  "/project/kube/ops-cp.yaml": fakeKubeconfig("ops-cp"),
  "/project/kube/shop.yaml": fakeKubeconfig("shop"),
  "/project/kube/billing.yaml": fakeKubeconfig("billing"),
};
const ctx = fakeValidationContext(files);

function expectIssue(raw: Record<string, unknown>, at: string, includes: string): void {
  const result = validateEnvironment(raw, ctx);
  assert.equal(result.ok, false, "expected the config to be rejected");
  if (result.ok) return;
  assert.ok(
    result.issues.some((i) => i.path === at && i.message.includes(includes)),
    `no issue at ${at} containing "${includes}"; got:\n${renderIssues(result.issues, "t")}`,
  );
}

function expectValid(raw: Record<string, unknown>, label: string) {
  const result = validateEnvironment(raw, ctx);
  assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, label));
  return result.config;
}

describe("cloud stack configs", () => {
  for (const stack of ["aws-example", "openstack-example"]) {
    it(`stacks/Pulumi.${stack}.yaml is valid`, () => {
      expectValid(stackSettings(stack), stack);
    });
  }

  it("stacks/Pulumi.existing-example.yaml is valid once its operator sets the bridge's passphrase, as its header says, and every image and package comes from its mirror", () => {
    const raw = stackSettings("existing-example");
    const config = expectValid(
      { ...raw, bridgePassphrase: "set with config set --secret" },
      "existing-example",
    );
    // What the components deploy, as the config resolves it (components/config/images.ts), and
    // Crossplane core's image and ImageConfig as the environment derives them.
    const xp = crossplaneImages(config, "2.4.0", false);
    const deployed = {
      dex: config.oidc.provider === "dex" ? config.oidc.image : "",
      backend: config.bind.image,
      konnector: config.bind.konnectorImage,
      bridge: config.bridge.image,
      haproxy: config.bridge.proxyImage,
      providerKubernetes: config.crossplane.providerKubernetes,
      providerAnynines: config.crossplane.providerAnynines,
      functionPatchAndTransform: config.crossplane.functionPatchAndTransform,
      dataservicesConfiguration: config.crossplane.dataservicesConfiguration,
      functionKlutch: config.crossplane.functionKlutch,
      crossplane: xp.image ? `${xp.image.repository}:${xp.image.tag}` : "",
    };
    assert.deepEqual(deployed, {
      dex: "mirror.example.com/dexidp/dex:v2.41.1",
      backend: "mirror.example.com/w5n9a2g2/klutch/example-backend:v1.4.0",
      konnector: "mirror.example.com/w5n9a2g2/klutch/konnector:v1.4.0",
      bridge: "mirror.example.com/klutch-pulumi/bridge:0.1.0",
      haproxy: "mirror.example.com/library/haproxy:2.6.12",
      providerKubernetes: "mirror.example.com/crossplane-contrib/provider-kubernetes:v1.3.1",
      providerAnynines: "mirror.example.com/w5n9a2g2/klutch/provider-anynines:v1.5.0",
      functionPatchAndTransform: "mirror.example.com/crossplane-contrib/function-patch-and-transform:v0.9.2",
      dataservicesConfiguration: "mirror.example.com/w5n9a2g2/klutch/dataservices:v1.5.0",
      functionKlutch: "mirror.example.com/klutch/function-klutch:v0.1.0",
      crossplane: "mirror.example.com/crossplane/crossplane:v2.4.0",
    });
    assert.deepEqual(xp.registryMirror, {
      registry: "mirror.example.com",
      upstreams: ["public.ecr.aws", "xpkg.crossplane.io", "xpkg.upbound.io"],
    });
    assert.deepEqual(
      [config.controlPlane, ...config.appClusters].map((c) => c.infrastructure),
      ["existing", "existing", "existing"],
    );
    assert.equal(config.bridge.state?.kind, "backend");
    expectIssue(raw, "klutch:bridgePassphrase", "is required when the bridge is deployed");
  });

  it("an image a setting names stays as named under a mirror; a mirror with a local cluster is refused, naming it", () => {
    const raw: Record<string, any> = {
      ...stackSettings("existing-example"),
      bridgePassphrase: "set with config set --secret",
    };
    raw.bridge = { ...raw.bridge, proxyImage: "registry.example.com/haproxy:3.2.4" };
    raw.crossplane = { ...raw.crossplane, image: "registry.example.com/crossplane:v2.4.0" };
    const config = expectValid(raw, "named");
    assert.equal(config.bridge.proxyImage, "registry.example.com/haproxy:3.2.4");
    assert.deepEqual(crossplaneImages(config, "2.4.0", false).image, {
      repository: "registry.example.com/crossplane",
      tag: "v2.4.0",
    });
    const local = stackSettings("local");
    expectIssue(
      { ...local, imageRegistry: "mirror.example.com" },
      "klutch:imageRegistry",
      '"mirror.example.com" is for clusters that pull their images, but klutch:controlPlane (control-plane) is a local cluster, which runs the images built on this machine and pulls nothing: remove klutch:imageRegistry',
    );
  });

  it("the bridge's S3 credentials: a shared credentials file with a [default] profile, for state in S3 only; a problem is named without repeating the text", () => {
    const raw: Record<string, any> = {
      ...stackSettings("existing-example"),
      bridgePassphrase: "set with config set --secret",
    };
    const good = "[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI\n";
    expectValid({ ...raw, bridgeStateCredentials: good }, "with credentials");
    for (const [text, says] of [
      [
        "[ops]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI\n",
        "has no [default] profile",
      ],
      [
        "[default]\naws_access_key_id = AKIDEXAMPLE\n",
        "has no aws_secret_access_key in its [default] profile",
      ],
      ["AKIDEXAMPLE:wJalrXUtnFEMI", "has no [default] profile"],
    ] as const) {
      const result = validateEnvironment({ ...raw, bridgeStateCredentials: text }, ctx);
      assert.equal(result.ok, false);
      if (result.ok) return;
      const issue = result.issues.find((i) => i.path === "klutch:bridgeStateCredentials");
      assert.ok(issue?.message.startsWith(says), issue?.message);
      assert.match(issue!.message, /config set --secret klutch:bridgeStateCredentials < credentials/);
      assert.doesNotMatch(renderIssues(result.issues, "t"), /AKIDEXAMPLE|wJalrXUtnFEMI/);
    }
    const gcs = structuredClone(raw);
    gcs.bridge.state = { kind: "backend", url: "gs://klutch-bridge-state" };
    expectIssue(
      { ...gcs, bridgeStateCredentials: good },
      "klutch:bridgeStateCredentials",
      "is for a deployed bridge whose state is in S3 (bridge.state {kind: backend, url: s3://…}), but this environment's bridge keeps its state at gs://klutch-bridge-state: remove it with `npm run pulumi -- config rm klutch:bridgeStateCredentials`",
    );
    const undeployed = structuredClone(raw);
    undeployed.bridge.deploy = false;
    expectIssue(
      { ...undeployed, bridgeStateCredentials: good },
      "klutch:bridgeStateCredentials",
      "but this environment deploys no bridge",
    );
  });

  it("the bridge's IAM role (EKS's roles for service accounts): an IAM role's ARN, for a deployed bridge with state in S3, never beside a credentials file", () => {
    const raw: Record<string, any> = {
      ...stackSettings("existing-example"),
      bridgePassphrase: "set with config set --secret",
    };
    const withRole = (arn: string, change: (r: Record<string, any>) => void = () => {}) => {
      const r = structuredClone(raw);
      r.bridge.awsRoleArn = arn;
      change(r);
      return r;
    };
    const role = "arn:aws:iam::123456789012:role/klutch/bridge-state";
    const config = expectValid(withRole(role), "with a role");
    assert.equal(config?.bridge.awsRoleArn, role);
    expectIssue(
      withRole("bridge-state"),
      "klutch:bridge.awsRoleArn",
      'is "bridge-state", which is no IAM role\'s ARN',
    );
    expectIssue(
      withRole(role, (r) => (r.bridge.state = { kind: "backend", url: "gs://klutch-bridge-state" })),
      "klutch:bridge.awsRoleArn",
      "but the bridge's state is not in S3 (bridge.state gs://klutch-bridge-state)",
    );
    expectIssue(
      withRole(role, (r) => (r.bridge.deploy = false)),
      "klutch:bridge.awsRoleArn",
      "but this environment deploys no bridge",
    );
    expectIssue(
      {
        ...withRole(role),
        bridgeStateCredentials: "[default]\naws_access_key_id = a\naws_secret_access_key = b\n",
      },
      "klutch:bridgeStateCredentials",
      `is set, and so is bridge.awsRoleArn (${role})`,
    );
    expectIssue(
      {
        environment: "t",
        controlPlane: { name: "cp", infrastructure: "local", nodes: 1 },
        appClusters: [],
        bridge: { awsRoleArn: role },
      },
      "klutch:bridge.awsRoleArn",
      "a local cluster runs no EKS pod identity webhook",
    );
  });

  it("refuses a Kubernetes minor past its upstream end of life, for EKS and for Magnum's kube_tag", () => {
    const eks = stackSettings("aws-example");
    eks.appClusters[0].aws.kubernetesVersion = "1.33";
    expectIssue(
      eks,
      "klutch:appClusters[0].aws.kubernetesVersion",
      "Kubernetes 1.33 is past its upstream end of life: use a supported minor, 1.35 to 1.37 (kubernetes.io/releases)",
    );
    const magnum = stackSettings("openstack-example");
    magnum.appClusters[0].openstack.kubernetesVersion = "v1.30.4-rancher1";
    expectIssue(magnum, "klutch:appClusters[0].openstack.kubernetesVersion", "Kubernetes 1.30 is past");
  });

  it("takes a supported or newer minor, and gives EKS one in standard support by default", () => {
    for (const version of ["1.35", "1.37", "1.38"]) {
      const raw = stackSettings("aws-example");
      raw.appClusters[0].aws.kubernetesVersion = version;
      expectValid(raw, version);
    }
    const raw = stackSettings("aws-example");
    delete raw.appClusters[0].aws.kubernetesVersion;
    assert.equal(expectValid(raw, "default").appClusters[0]?.aws?.kubernetesVersion, "1.35");
  });

  it("rejects more availability zones than the region has, naming the field", () => {
    const raw = stackSettings("aws-example");
    raw.appClusters[0].aws.region = "us-west-1";
    raw.appClusters[0].aws.availabilityZoneCount = 3;
    expectIssue(
      raw,
      "klutch:appClusters[0].aws.availabilityZoneCount",
      "us-west-1 has 2 availability zone(s)",
    );
  });

  it("reports a malformed field and the rules about the rest of its entry in one run", () => {
    const raw = stackSettings("aws-example");
    raw.controlPlane.network.nodeCidr = "10.10.0.1/16"; // host bits: a schema problem
    raw.controlPlane.aws.availabilityZoneCount = 5; // a rule across settings (the region's zones)
    raw.appClusters[0].networkConnector.dataServicePorts = [0]; // another entry's schema problem
    raw.appClusters[0].aws.region = "us-west-1"; // and a rule about that entry's other fields
    raw.appClusters[0].aws.availabilityZoneCount = 3;
    const result = validateEnvironment(raw, ctx);
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(
      result.issues.map((i) => i.path),
      [
        "klutch:controlPlane.network.nodeCidr",
        "klutch:appClusters[0].networkConnector.dataServicePorts[0]",
        "klutch:controlPlane.aws.availabilityZoneCount",
        "klutch:appClusters[0].aws.availabilityZoneCount",
      ],
      renderIssues(result.issues, "t"),
    );
    const byPath = Object.fromEntries(result.issues.map((i) => [i.path, i.message]));
    assert.match(byPath["klutch:controlPlane.network.nodeCidr"]!, /10\.10\.0\.1\/16/);
    assert.match(
      byPath["klutch:controlPlane.aws.availabilityZoneCount"]!,
      /eu-central-1 has 3 availability zone/,
    );
    assert.match(
      byPath["klutch:appClusters[0].aws.availabilityZoneCount"]!,
      /us-west-1 has 2 availability zone/,
    );
  });

  it("does not add a misleading rule about a field it had to leave out", () => {
    const raw = stackSettings("aws-example");
    raw.controlPlane.network = "10.10.0.0/16"; // not an object: the schema says so
    raw.controlPlane.aws.availabilityZoneCount = 5;
    const result = validateEnvironment(raw, ctx);
    assert.equal(result.ok, false);
    if (result.ok) return;
    // Not also "network is required for infrastructure aws": it is there, only malformed.
    assert.deepEqual(
      result.issues.map((i) => i.path),
      ["klutch:controlPlane.network", "klutch:controlPlane.aws.availabilityZoneCount"],
      renderIssues(result.issues, "t"),
    );
  });

  it("rejects overlapping peered VPCs", () => {
    const raw = stackSettings("aws-example");
    raw.appClusters[0].network.nodeCidr = "10.10.128.0/20";
    expectIssue(
      raw,
      "klutch:appClusters[0].network.nodeCidr",
      "overlaps the data-service network 10.10.0.0/16",
    );
  });

  it("rejects cross-account peering without accepter credentials (account from the role ARN too)", () => {
    const raw = stackSettings("aws-example");
    delete raw.appClusters[1].networkConnector.accepter;
    delete raw.appClusters[1].aws.accountId; // still known from aws.roleArn
    expectIssue(
      raw,
      "klutch:appClusters[1].networkConnector.accepter",
      "is required when peering across accounts",
    );
  });

  it("rejects a VPC CIDR too small for its zones", () => {
    const raw = stackSettings("aws-example");
    raw.controlPlane.network.nodeCidr = "10.10.0.0/24";
    raw.controlPlane.dataServiceCidr = "10.10.0.0/25";
    expectIssue(raw, "klutch:controlPlane.network.nodeCidr", "too small for 3 availability zone(s)");
  });

  it("rejects a data-service CIDR outside the peered control plane VPC", () => {
    const raw = stackSettings("aws-example");
    raw.controlPlane.dataServiceCidr = "10.99.0.0/24";
    expectIssue(
      raw,
      "klutch:controlPlane.dataServiceCidr",
      "must lie inside the control plane VPC 10.10.0.0/16",
    );
  });

  it("needs route tables and subnets to adopt a VPC, and a VPC to adopt a cluster", () => {
    const raw = stackSettings("aws-example");
    raw.appClusters[0].aws.existingVpcId = "vpc-0abc";
    expectIssue(raw, "klutch:appClusters[0].aws.existingRouteTableIds", "is required with existingVpcId");
    expectIssue(raw, "klutch:appClusters[0].aws.existingSubnetIds", "is required with existingVpcId");
    const raw2 = stackSettings("aws-example");
    raw2.appClusters[0].aws.existingClusterName = "legacy";
    expectIssue(raw2, "klutch:appClusters[0].aws.existingClusterName", "needs aws.existingVpcId");
  });

  it("accepts an adopted VPC and cluster", () => {
    const raw = stackSettings("aws-example");
    Object.assign(raw.appClusters[0].aws, {
      existingVpcId: "vpc-0abc",
      existingClusterName: "legacy",
      existingRouteTableIds: ["rtb-01", "rtb-02"],
    });
    const result = validateEnvironment(raw, ctx);
    assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "t"));
  });

  it("rejects an OpenStack cluster (its Magnum template) without a network", () => {
    const raw = stackSettings("openstack-example");
    delete raw.controlPlane.network;
    expectIssue(raw, "klutch:controlPlane.network", "the Magnum cluster template needs a network");
    const raw2 = stackSettings("openstack-example");
    delete raw2.controlPlane.openstack.externalNetworkId;
    expectIssue(raw2, "klutch:controlPlane.openstack.externalNetworkId", "is required");
  });

  it("checks the kubeconfig of an existing OpenStack cluster", () => {
    const raw = stackSettings("openstack-example");
    raw.appClusters[1].kubeconfig = { path: "kube/missing.yaml" };
    expectIssue(raw, "klutch:appClusters[1].kubeconfig", "does not exist");
    raw.appClusters[1].kubeconfig = { path: "kube/magnum.yaml" };
    const result = validateEnvironment(raw, ctx);
    assert.ok(result.ok, result.ok ? "" : renderIssues(result.issues, "t"));
  });
});
