/**
 * A data-service instance that speaks TLS under its own name, for the instance-names e2e: a CA
 * and a server certificate for the instance's DNS name (openssl, as an operator would make them),
 * a PostgreSQL with `ssl=on` behind a Service of that name, and the app-cluster side of the
 * konnector for one claim (the claim's CRD and the claim with its status, as the konnector copies
 * them from the provider's cluster: klutchio bind/pkg/konnector/controllers/cluster/serviceexport/
 * status/status_reconcile.go copies the whole .status).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { strict as assert } from "node:assert";
import { kubectl, kubectlApply, kubectlJson } from "./kubectl";
import { POSTGRES_UID } from "../../host/local-clusters/images/catalog";

export interface TlsMaterial {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** A CA of its own, and a certificate it signs for `dnsName` alone (a SAN, as verify-full checks). */
export function tlsMaterial(dnsName: string): TlsMaterial {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-tls-"));
  const at = (f: string) => path.join(dir, f);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  try {
    openssl(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      at("ca.key"),
      "-out",
      at("ca.crt"),
      "-subj",
      "/CN=a9s-e2e-ca",
      "-days",
      "1",
    );
    openssl("req", ...ec, "-keyout", at("tls.key"), "-out", at("tls.csr"), "-subj", `/CN=${dnsName}`);
    fs.writeFileSync(at("ext"), `subjectAltName=DNS:${dnsName}\n`);
    openssl(
      "x509",
      "-req",
      "-in",
      at("tls.csr"),
      "-CA",
      at("ca.crt"),
      "-CAkey",
      at("ca.key"),
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      at("ext"),
      "-out",
      at("tls.crt"),
    );
    const read = (f: string) => fs.readFileSync(at(f), "utf8");
    return { caPem: read("ca.crt"), certPem: read("tls.crt"), keyPem: read("tls.key") };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL with TLS on, its certificate from a Secret, behind Service `service` on 5432. */
export function tlsPostgres(
  namespace: string,
  service: string,
  image: string,
  password: string,
  tls: TlsMaterial,
): object[] {
  const labels = { app: service };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${service}-tls`, namespace },
      type: "kubernetes.io/tls",
      stringData: { "tls.crt": tls.certPem, "tls.key": tls.keyPem },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: service, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            // PostgreSQL takes a key owned by root only if no one but root and its group reads it.
            securityContext: { fsGroup: POSTGRES_UID },
            containers: [
              {
                name: "postgres",
                image,
                imagePullPolicy: "Never",
                args: ["-c", "ssl=on", "-c", "ssl_cert_file=/tls/tls.crt", "-c", "ssl_key_file=/tls/tls.key"],
                env: [{ name: "POSTGRES_PASSWORD", value: password }],
                ports: [{ containerPort: 5432 }],
                readinessProbe: { exec: { command: ["pg_isready", "-h", "127.0.0.1"] }, periodSeconds: 2 },
                volumeMounts: [{ name: "tls", mountPath: "/tls", readOnly: true }],
              },
            ],
            volumes: [{ name: "tls", secret: { secretName: `${service}-tls`, defaultMode: 0o640 } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: service, namespace },
      spec: { selector: labels, ports: [{ name: "sql", port: 5432, targetPort: 5432 }] },
    },
  ];
}

/**
 * What the konnector does for one bound claim: the claim's CRD in the app cluster (the provider's,
 * as an APIServiceBinding installs it) and the claim there, its status the provider's.
 */
export function copyClaimToApp(
  controlPlane: string,
  app: string,
  crd: string,
  resource: string,
  namespace: string,
  name: string,
  toNamespace: string,
): void {
  const source = kubectlJson(controlPlane, ["get", "crd", crd]);
  const apply = (doc: object) => {
    const r = kubectlApply(app, JSON.stringify(doc));
    assert.equal(r.status, 0, r.stderr);
  };
  apply({ apiVersion: source.apiVersion, kind: source.kind, metadata: { name: crd }, spec: source.spec });
  kubectl(app, ["wait", "--for=condition=Established", `crd/${crd}`, "--timeout=60s"]);
  const claim = kubectlJson(controlPlane, ["-n", namespace, "get", resource, name]);
  apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: toNamespace } });
  // No compositionRef: the app cluster's admission policy judges the offered ones, and the copy
  // composes nothing there.
  const spec = { ...claim.spec };
  delete spec.compositionRef;
  apply({ apiVersion: claim.apiVersion, kind: claim.kind, metadata: { name, namespace: toNamespace }, spec });
  kubectl(app, [
    "-n",
    toNamespace,
    "patch",
    resource,
    name,
    "--subresource=status",
    "--type=merge",
    "-p",
    JSON.stringify({ status: claim.status }),
  ]);
}
