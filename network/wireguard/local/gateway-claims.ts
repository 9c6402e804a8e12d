import * as fs from "node:fs";
import { waitUntil } from "./wait";

/**
 * The shared gateway's bookkeeping in its directory: a lock, and the tunnel addresses and veth
 * links each group holds. Groups reconcile in parallel (one engine each) and share the gateway,
 * so what one hands out is recorded in files the others see.
 */

/** What a group claims: a tunnel address, or a link slot (localNames' `linkBase+<n>`). */
export type ClaimKind = "addresses" | "links";

/**
 * Runs `fn` holding the gateway's lock: one group at a time changes the gateway. A lock whose
 * holder is gone (a killed bridge) is taken over.
 */
export function withGatewayLock<T>(dir: string, fn: () => T): T {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = `${dir}/lock`;
  waitUntil(
    "the WireGuard gateway lock",
    () => {
      try {
        fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
        return true;
      } catch {
        const holder = Number(fs.readFileSync(file, "utf8").trim());
        try {
          process.kill(holder, 0);
        } catch {
          fs.rmSync(file, { force: true });
        }
        return false;
      }
    },
    60000,
  );
  try {
    return fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Everything of `kind` some group holds. */
export function claimed(dir: string, kind: ClaimKind): string[] {
  try {
    return fs.readdirSync(`${dir}/${kind}`);
  } catch {
    return [];
  }
}

/** Whether some group holds `value`. */
export function isClaimed(dir: string, kind: ClaimKind, value: string): boolean {
  return fs.existsSync(`${dir}/${kind}/${value}`);
}

/** What `owner` holds of `kind`, or else the first free candidate, now held by `owner`. */
export function claim(dir: string, kind: ClaimKind, candidates: string[], owner: string): string {
  const d = `${dir}/${kind}`;
  fs.mkdirSync(d, { recursive: true });
  const existing = claimed(dir, kind).find((c) => fs.readFileSync(`${d}/${c}`, "utf8") === owner);
  if (existing) return existing;
  for (const c of candidates) {
    try {
      fs.writeFileSync(`${d}/${c}`, owner, { flag: "wx" });
      return c;
    } catch {
      // Taken by another group.
    }
  }
  throw new Error(`no free ${kind} left for ${owner} (all ${candidates.length} taken)`);
}

/** Frees what `owner` holds of `kind`. */
export function release(dir: string, kind: ClaimKind, owner: string): void {
  for (const c of claimed(dir, kind)) {
    if (fs.readFileSync(`${dir}/${kind}/${c}`, "utf8") === owner) fs.rmSync(`${dir}/${kind}/${c}`);
  }
}
