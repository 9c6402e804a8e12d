import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { which } from "../host/binaries";
import { probe } from "../host/health";
import { ensureCa, issueServingCert } from "../host/pki";
import { allocatePort } from "../host/ports";
import { isAlive, ownedPid, spawnDetached, stopProcess } from "../host/processes";
import { registryConfig } from "./config";

/** Where the registry lives under the local clusters' state dir (not a DNS label: never a cluster). */
import { REGISTRY_DIR } from "../../../lib/local/packages";

interface RegistryState {
  port: number;
  /** The addresses its certificate names, loopback first. */
  addresses: string[];
}

export interface RegistryInfo {
  port: number;
  /** The CA that signed its certificate: what containerd, Crossplane and pushes trust. */
  caCert: string;
}

/**
 * The local clusters' OCI registry (distribution, Debian's `docker-registry`): the project's
 * Crossplane packages are pushed here and Crossplane's package manager and the nodes' containerd
 * pull them, as from any registry. It listens on loopback with a certificate from a CA of its
 * own, for 127.0.0.1 (pushes from this machine) and each node link's host end (the nodes reach
 * it there through their DNAT, host/local-clusters/node/host.ts).
 */
export class LocalRegistry {
  readonly dir: string;
  private readonly pkiDir: string;
  private readonly stateFile: string;

  constructor(
    stateDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.dir = path.join(path.resolve(stateDir), REGISTRY_DIR);
    this.pkiDir = path.join(this.dir, "pki");
    this.stateFile = path.join(this.dir, "state.json");
  }

  get caCert(): string {
    return path.join(this.pkiDir, "ca.crt");
  }

  get logFile(): string {
    return path.join(this.dir, "registry.log");
  }

  private get pidFile(): string {
    return path.join(this.dir, "registry.pid");
  }

  private state(): RegistryState | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.stateFile, "utf8")) as RegistryState;
    } catch {
      return undefined;
    }
  }

  /** The port, chosen once and kept (nodes' DNAT rules and package references carry it). */
  async port(reserved: Set<number>): Promise<number> {
    const known = this.state()?.port;
    if (known !== undefined) {
      reserved.add(known);
      return known;
    }
    const port = await allocatePort(reserved);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    fs.writeFileSync(this.stateFile, JSON.stringify({ port, addresses: [] } satisfies RegistryState));
    return port;
  }

  pid(): number | undefined {
    return ownedPid(this.pidFile, this.dir);
  }

  /**
   * Runs the registry with a certificate for loopback and these node addresses. Left alone when
   * it runs with them already; re-issued and restarted when the set changed (a node got a new link).
   */
  async up(nodeAddresses: string[], reserved: Set<number>): Promise<RegistryInfo> {
    const port = await this.port(reserved);
    const addresses = ["127.0.0.1", ...[...new Set(nodeAddresses)].sort()];
    const old = this.state();
    const cert = path.join(this.pkiDir, "registry.crt");
    const key = path.join(this.pkiDir, "registry.key");
    const sameCert =
      old !== undefined && JSON.stringify(old.addresses) === JSON.stringify(addresses) && fs.existsSync(cert);
    const running = this.pid();
    if (sameCert && running !== undefined && (await this.healthy(port))) return { port, caCert: this.caCert };
    if (running !== undefined) await stopProcess(running, 5_000);

    await ensureCa(this.pkiDir, "klutch-local-registry-ca");
    if (!sameCert) await issueServingCert(this.pkiDir, "registry", "/CN=klutch-local-registry", addresses);
    const config = path.join(this.dir, "config.yml");
    fs.writeFileSync(
      config,
      registryConfig({ port, dataDir: path.join(this.dir, "data"), certFile: cert, keyFile: key }),
    );
    fs.writeFileSync(this.stateFile, JSON.stringify({ port, addresses } satisfies RegistryState));
    const binary =
      which("docker-registry", this.env) ??
      (fs.existsSync("/usr/bin/docker-registry") ? "/usr/bin/docker-registry" : undefined);
    if (!binary)
      throw new Error(
        "docker-registry not found: run `bash host/scripts/setup.sh` (Debian package docker-registry)",
      );
    const pid = spawnDetached({
      binary,
      args: ["serve", config],
      env: { PATH: this.env.PATH ?? "/usr/bin:/bin" },
      cwd: this.dir,
      logFile: this.logFile,
      pidFile: this.pidFile,
    });
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!isAlive(pid)) throw new Error(`the package registry exited during start; see ${this.logFile}`);
      if (await this.healthy(port)) return { port, caCert: this.caCert };
      if (Date.now() > deadline)
        throw new Error(`the package registry did not answer within 30 s; see ${this.logFile}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** The registry API's base answers over TLS verified with our CA (distribution returns `{}`). */
  private async healthy(port: number): Promise<boolean> {
    const answer = await probe(`https://127.0.0.1:${port}/v2/`, { caCert: this.caCert }, 2_000).catch(
      () => "",
    );
    return answer === "{}" || answer === "ok";
  }

  async stop(): Promise<boolean> {
    const pid = this.pid();
    if (pid === undefined) return false;
    await stopProcess(pid, 5_000);
    fs.rmSync(this.pidFile, { force: true });
    return true;
  }
}

/** Whether the registry at 127.0.0.1:`port` holds `repository:tag` (a HEAD of its manifest). */
export function hasTag(port: number, caCert: string, repository: string, tag: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `https://127.0.0.1:${port}/v2/${repository}/manifests/${tag}`,
      {
        method: "HEAD",
        ca: fs.readFileSync(caCert),
        agent: false,
        timeout: 5_000,
        headers: {
          Accept: [
            "application/vnd.oci.image.manifest.v1+json",
            "application/vnd.oci.image.index.v1+json",
          ].join(", "),
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on("timeout", () => req.destroy(new Error("the registry did not answer within 5 s")));
    req.on("error", reject);
    req.end();
  });
}
