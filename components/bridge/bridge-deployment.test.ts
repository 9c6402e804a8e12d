import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import { specialSigKey } from "@pulumi/pulumi/runtime/rpc";
import { BridgeDeployment } from "./bridge-deployment";
import * as path from "node:path";
import {
  BRIDGE_PATHS,
  bridgeArgs,
  bridgeDeploymentProblem,
  describeProblem,
  type BridgeState,
} from "../../lib/bridge/deployment";
import { mockPulumi, settle } from "../../test/helpers/mocks";

/** Good arguments of a BridgeDeployment on the control plane `provider` names. */
const deploymentArgs = (provider: k8s.Provider) => ({
  provider,
  namespace: "klutch-network",
  serviceAccountName: "klutch-bridge",
  image: "klutch.local/bridge:1-abc",
  state: { kind: "hostPath" as const, path: "/srv/b" } as BridgeState,
  passphrase: "p".repeat(20),
  dataPlaneKubeconfig: "k",
});

describe("bridge Deployment: command line and checks", () => {
  it("runs with leader election, the kubernetes target, the mounted data-plane kubeconfig and probes on every address", () => {
    assert.deepEqual(
      bridgeArgs({
        opsPort: 9464,
        state: { kind: "hostPath", path: "/var/lib/x" },
        flags: ["--service-type", "NodePort"],
      }),
      [
        "--leader-elect",
        "--target",
        "kubernetes",
        "--data-plane-kubeconfig",
        "/etc/klutch-bridge/data-plane-kubeconfig",
        "--state-dir",
        "/var/lib/klutch-bridge",
        "--ops-address",
        "0.0.0.0",
        "--ops-port",
        "9464",
        "--service-type",
        "NodePort",
      ],
    );
    const shared = bridgeArgs({ opsPort: 1, state: { kind: "backend", url: "s3://b/p" }, flags: [] });
    assert.deepEqual(shared.slice(7, 9), ["--backend", "s3://b/p"]);
  });

  it("names the field, the value and the fix for bad arguments", () => {
    const ok = { replicas: 2, opsPort: 9464, state: { kind: "hostPath" as const, path: "/srv/b" } };
    const problem = (a: Parameters<typeof bridgeDeploymentProblem>[0]) => {
      const p = bridgeDeploymentProblem(a);
      return p ? describeProblem(p) : "";
    };
    assert.equal(bridgeDeploymentProblem(ok), undefined);
    assert.deepEqual(bridgeDeploymentProblem({ ...ok, replicas: 0 }), {
      field: "replicas",
      message: "0 must be a whole number >= 1 (2 for a standby)",
    });
    assert.match(problem({ ...ok, replicas: 0 }), /^replicas 0 must be a whole number >= 1/);
    assert.match(problem({ ...ok, opsPort: 70000 }), /^opsPort 70000 must be a TCP port/);
    assert.match(
      problem({ ...ok, state: { kind: "hostPath", path: "rel" } }),
      /^state.path "rel" must be an absolute directory/,
    );
    assert.match(
      problem({ ...ok, state: { kind: "backend", url: "file:///tmp/s" } }),
      /^state.url "file:\/\/\/tmp\/s" must be a backend every replica reaches .* use state.kind hostPath/,
    );
    assert.match(
      problem({ ...ok, flags: ["--backend=s3://x"] }),
      /^bridgeFlags may not set --backend: the component sets it; remove it/,
    );
  });

  it("BridgeDeployment refuses bad arguments before it registers anything, itself included", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", { kubeconfig: "k" });
    await settle();
    const before = run.resources.length;
    const args = deploymentArgs(provider);
    for (const [bad, message] of [
      [{ replicas: 0 }, /BridgeDeployment b: replicas 0 must be a whole number >= 1/],
      [{ state: { kind: "backend", url: "file:///x" } }, /BridgeDeployment b: state.url "file:\/\/\/x"/],
      [{ bridgeFlags: ["--target", "local"] }, /BridgeDeployment b: bridgeFlags may not set --target/],
      [{ image: " " }, /BridgeDeployment b: image " " must name the bridge image/],
    ] as const) {
      assert.throws(() => new BridgeDeployment("b", { ...args, ...bad } as never), message);
    }
    await settle();
    assert.deepEqual(
      run.resources.slice(before).map((r) => `${r.type} ${r.name}`),
      [],
      "nothing registered, not even the component",
    );
    // And good arguments do register it, with its children.
    new BridgeDeployment("b", args);
    await settle();
    assert.deepEqual(
      run.resources
        .slice(before)
        .map((r) => r.type)
        .sort(),
      ["klutch:bridge:BridgeDeployment", "kubernetes:apps/v1:Deployment", "kubernetes:core/v1:Secret"],
    );
  });

  it("an IAM role marks the pod template, so a changed role rolls the pods (EKS's webhook acts on new pods only)", async () => {
    const run = mockPulumi({});
    const args = {
      ...deploymentArgs(new k8s.Provider("cp3", { kubeconfig: "k" })),
      state: { kind: "backend" as const, url: "s3://state?region=eu-central-1" },
    };
    new BridgeDeployment("role", { ...args, awsRoleArn: "arn:aws:iam::123456789012:role/klutch-bridge" });
    new BridgeDeployment("no-role", args);
    await settle();
    const template = (name: string) =>
      run.ofType("kubernetes:apps/v1:Deployment").find((r) => r.name === name)!.inputs.spec.template.metadata;
    assert.deepEqual(template("role").annotations, {
      "klutch.anynines.com/aws-role-arn": "arn:aws:iam::123456789012:role/klutch-bridge",
    });
    assert.equal(template("no-role").annotations, undefined);
  });

  it("S3 credentials, when given, are a file of the Secret named by AWS_SHARED_CREDENTIALS_FILE; never a value in the environment", async () => {
    const run = mockPulumi({});
    const args = {
      ...deploymentArgs(new k8s.Provider("cp2", { kubeconfig: "k" })),
      image: "mirror.example.com/klutch/bridge:0.1.0",
      state: { kind: "backend" as const, url: "s3://state?region=eu-central-1" },
    };
    const credentials =
      "[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = s3cr3t-example\n";
    new BridgeDeployment("with", { ...args, stateCredentials: credentials });
    new BridgeDeployment("without", args);
    await settle();
    const of = (type: string, name: string) => run.resources.find((r) => r.type === type && r.name === name)!;
    // A secret input reaches the mocks wrapped in Pulumi's secret signature: its value.
    const unwrapped = (v: any): any => (v && typeof v === "object" && specialSigKey in v ? v.value : v);
    const secretData = (name: string): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(unwrapped(of("kubernetes:core/v1:Secret", name).inputs.stringData) as object).map(
          ([k, v]) => [k, unwrapped(v)],
        ),
      );
    const container = (name: string) =>
      of("kubernetes:apps/v1:Deployment", name).inputs.spec.template.spec.containers[0] as {
        env: { name: string; value: string }[];
        volumeMounts: { mountPath: string }[];
      };
    assert.deepEqual(container("with").env, [
      { name: "PULUMI_CONFIG_PASSPHRASE_FILE", value: BRIDGE_PATHS.passphrase },
      { name: "AWS_SHARED_CREDENTIALS_FILE", value: BRIDGE_PATHS.awsCredentials },
    ]);
    // The file is in the mounted Secret's directory.
    assert.equal(path.dirname(BRIDGE_PATHS.awsCredentials), BRIDGE_PATHS.secretDir);
    assert.ok(container("with").volumeMounts.some((m) => m.mountPath === BRIDGE_PATHS.secretDir));
    assert.deepEqual(Object.keys(secretData("with-secret")).sort(), [
      "aws-credentials",
      "data-plane-kubeconfig",
      "passphrase",
    ]);
    assert.equal(secretData("with-secret")["aws-credentials"], credentials);
    assert.deepEqual(
      container("without").env.map((e) => e.name),
      ["PULUMI_CONFIG_PASSPHRASE_FILE"],
    );
    assert.ok(!("aws-credentials" in secretData("without-secret")));
  });
});
