import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** The files of one cluster's PKI, all in `<cluster>/pki`. */
export interface PkiFiles {
  caCert: string;
  caKey: string;
  apiServerCert: string;
  apiServerKey: string;
  adminCert: string;
  adminKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
  /** Serving cert of kube-controller-manager's health port, so probes can verify it too. */
  controllerManagerServingCert: string;
  controllerManagerServingKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** The API server's client cert for kubelets (logs, exec, port-forward); O=system:masters. */
  apiServerKubeletClientCert: string;
  apiServerKubeletClientKey: string;
}

export function pkiFiles(pkiDir: string): PkiFiles {
  const f = (name: string) => path.join(pkiDir, name);
  return {
    caCert: f("ca.crt"),
    caKey: f("ca.key"),
    apiServerCert: f("apiserver.crt"),
    apiServerKey: f("apiserver.key"),
    adminCert: f("admin.crt"),
    adminKey: f("admin.key"),
    controllerManagerCert: f("controller-manager.crt"),
    controllerManagerKey: f("controller-manager.key"),
    controllerManagerServingCert: f("controller-manager-serving.crt"),
    controllerManagerServingKey: f("controller-manager-serving.key"),
    serviceAccountKey: f("sa.key"),
    serviceAccountPub: f("sa.pub"),
    apiServerKubeletClientCert: f("apiserver-kubelet-client.crt"),
    apiServerKubeletClientKey: f("apiserver-kubelet-client.key"),
  };
}

// Throw-away loopback clusters whose state dir may be kept for a long time: ten years so a
// kept state dir never trips over an expired certificate.
const DAYS = "3650";

// Names and addresses the API server is reached by: loopback for everything on this machine,
// the in-cluster names and the first address of --service-cluster-ip-range (10.96.0.0/16)
// for anything that resolves the `kubernetes` Service.
const API_SERVER_SANS = [
  "DNS:localhost",
  "DNS:kubernetes",
  "DNS:kubernetes.default",
  "DNS:kubernetes.default.svc",
  "DNS:kubernetes.default.svc.cluster.local",
  "IP:127.0.0.1",
  "IP:10.96.0.1",
].join(",");

// Our own config file, so Debian's /etc/ssl/openssl.cnf (which adds CA extensions to every
// `req -x509`) has no say in what the certificates contain.
const OPENSSL_CONFIG = `
[req]
distinguished_name = dn
prompt = no
[dn]
CN = placeholder
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign, digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = ${API_SERVER_SANS}
authorityKeyIdentifier = keyid
[loopback_server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = clientAuth
authorityKeyIdentifier = keyid
`;

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFileAsync("openssl", args, { cwd });
  } catch (err) {
    const e = err as Error & { stderr?: string };
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

// P-256 keys: generated in milliseconds (RSA takes up to a second each on a busy machine) and
// accepted everywhere Kubernetes takes a key, including service account token signing (ES256).
async function newKey(file: string, cwd: string): Promise<void> {
  await openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", file], cwd);
  fs.chmodSync(path.resolve(cwd, file), 0o600);
}

/**
 * A key and a certificate from the CA in `cwd` (ca.crt, ca.key), with the extensions of
 * `section` in the openssl.cnf there: `<base>.key`, `<base>.crt`.
 */
async function issue(
  cwd: string,
  base: string,
  subject: string,
  section: "server" | "loopback_server" | "client" | "addresses",
): Promise<void> {
  await newKey(`${base}.key`, cwd);
  await openssl(
    ["req", "-new", "-config", "openssl.cnf", "-key", `${base}.key`, "-subj", subject, "-out", `${base}.csr`],
    cwd,
  );
  const serial = `0x${randomBytes(16).toString("hex")}`;
  await openssl(
    [
      "x509",
      "-req",
      "-in",
      `${base}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-set_serial",
      serial,
      "-days",
      DAYS,
      "-extfile",
      "openssl.cnf",
      "-extensions",
      section,
      "-out",
      `${base}.crt`,
    ],
    cwd,
  );
  fs.rmSync(path.resolve(cwd, `${base}.csr`));
}

/** A self-signed CA (ca.key, ca.crt) in `dir`, with the openssl.cnf every later issue reads. */
async function newCa(dir: string, commonName: string): Promise<void> {
  fs.writeFileSync(path.join(dir, "openssl.cnf"), OPENSSL_CONFIG);
  await newKey("ca.key", dir);
  await openssl(
    [
      "req",
      "-x509",
      "-new",
      "-config",
      "openssl.cnf",
      "-extensions",
      "ca",
      "-key",
      "ca.key",
      "-subj",
      `/CN=${commonName}`,
      "-days",
      DAYS,
      "-out",
      "ca.crt",
    ],
    dir,
  );
}

async function generate(dir: string, clusterName: string): Promise<void> {
  await newCa(dir, `klutch-local-${clusterName}-ca`);
  await Promise.all([
    issueLeaves(dir, LEAVES),
    (async () => {
      await newKey("sa.key", dir);
      await openssl(["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
    })(),
  ]);
}

interface Leaf {
  base: string;
  subject: string;
  section: "server" | "loopback_server" | "client";
}

const LEAVES: Leaf[] = [
  { base: "apiserver", subject: "/CN=kube-apiserver", section: "server" },
  // O=system:masters is bound to cluster-admin by the bootstrap RBAC policy.
  { base: "admin", subject: "/O=system:masters/CN=kubernetes-admin", section: "client" },
  // This CN is the user the bootstrap policy grants the controller-manager's own role.
  { base: "controller-manager", subject: "/CN=system:kube-controller-manager", section: "client" },
  { base: "controller-manager-serving", subject: "/CN=kube-controller-manager", section: "loopback_server" },
  // What kubelets accept from the API server (their webhook authorizer asks the API server,
  // which lets system:masters do anything).
  {
    base: "apiserver-kubelet-client",
    subject: "/O=system:masters/CN=kube-apiserver-kubelet-client",
    section: "client",
  },
];

// The leaves are independent of each other: issue them concurrently.
async function issueLeaves(dir: string, leaves: Leaf[]): Promise<void> {
  await Promise.all(leaves.map((l) => issue(dir, l.base, l.subject, l.section)));
}

function complete(pkiDir: string): boolean {
  return (Object.values(pkiFiles(pkiDir)) as string[]).every((file) => fs.existsSync(file));
}

/**
 * The cluster's certificates and keys, generated on first use and reused afterwards (etcd
 * holds service account tokens signed with them). Generation happens in a scratch directory
 * that is renamed into place, so a crash half-way never leaves a half PKI behind.
 */
export async function ensurePki(pkiDir: string, clusterName: string): Promise<PkiFiles> {
  if (complete(pkiDir)) return pkiFiles(pkiDir);
  // A PKI made before a leaf was added keeps its CA and service account key (tokens signed
  // with it live in etcd): only the missing leaves are issued.
  const f = pkiFiles(pkiDir);
  if ([f.caCert, f.caKey, f.serviceAccountKey, f.serviceAccountPub].every((file) => fs.existsSync(file))) {
    fs.writeFileSync(path.join(pkiDir, "openssl.cnf"), OPENSSL_CONFIG);
    await issueLeaves(
      pkiDir,
      LEAVES.filter(
        (l) =>
          !fs.existsSync(path.join(pkiDir, `${l.base}.crt`)) ||
          !fs.existsSync(path.join(pkiDir, `${l.base}.key`)),
      ),
    );
    return f;
  }
  const scratch = `${pkiDir}.partial-${process.pid}`;
  fs.rmSync(scratch, { recursive: true, force: true });
  fs.mkdirSync(scratch, { recursive: true, mode: 0o700 });
  try {
    await generate(scratch, clusterName);
    fs.rmSync(pkiDir, { recursive: true, force: true });
    fs.renameSync(scratch, pkiDir);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return pkiFiles(pkiDir);
}

/**
 * A client certificate from the cluster's CA in `pkiDir`, written as `<outBase>.crt` and
 * `<outBase>.key` (absolute): the node's components (kubelet as system:node:<name> in
 * system:nodes, kube-proxy, kube-scheduler) authenticate with these.
 */
export async function issueClientCert(
  pkiDir: string,
  outBase: string,
  subject: string,
): Promise<{ cert: string; key: string }> {
  fs.mkdirSync(path.dirname(outBase), { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(pkiDir, "openssl.cnf"), OPENSSL_CONFIG);
  await issue(pkiDir, outBase, subject, "client");
  return { cert: `${outBase}.crt`, key: `${outBase}.key` };
}

/**
 * A CA of its own in `dir` (ca.crt, ca.key), made once: for a service on this machine that is
 * not one cluster's (the local package registry), so trusting it trusts nothing else.
 */
export async function ensureCa(dir: string, commonName: string): Promise<{ caCert: string; caKey: string }> {
  const caCert = path.join(dir, "ca.crt");
  const caKey = path.join(dir, "ca.key");
  if (fs.existsSync(caCert) && fs.existsSync(caKey)) return { caCert, caKey };
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  await newCa(dir, commonName);
  return { caCert, caKey };
}

/**
 * A serving certificate from the CA in `dir` for exactly these IP addresses (written as
 * `<base>.crt`/`<base>.key` there), replacing an earlier one.
 */
export async function issueServingCert(
  dir: string,
  base: string,
  subject: string,
  addresses: string[],
): Promise<{ cert: string; key: string }> {
  if (addresses.length === 0) throw new Error("a serving certificate needs at least one address");
  for (const a of addresses)
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(a)) throw new Error(`not an IPv4 address for a certificate: ${a}`);
  const extensions = `${OPENSSL_CONFIG}
[addresses]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = ${addresses.map((a) => `IP:${a}`).join(",")}
authorityKeyIdentifier = keyid
`;
  fs.writeFileSync(path.join(dir, "openssl.cnf"), extensions);
  await issue(dir, base, subject, "addresses");
  return { cert: path.join(dir, `${base}.crt`), key: path.join(dir, `${base}.key`) };
}
