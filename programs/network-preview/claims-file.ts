import * as fs from "node:fs";
import * as YAML from "yaml";
import type { ClaimChange } from "./plan/model";

/** The annotation that previews a manifest of the claims file as deleted rather than applied. */
export const DELETE_ANNOTATION = "klutch.anynines.com/preview-action";

/**
 * Reads a file of TCPConnection manifests (YAML, several documents or a List). A manifest
 * annotated `klutch.anynines.com/preview-action: delete` is previewed as deleted; every
 * other one as applied. The implementation is the claim's composition (compositionRef or
 * the implementation label of compositionSelector), else `defaultImplementation`.
 */
export function readClaims(file: string, defaultImplementation: string): ClaimChange[] {
  const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS() as unknown);
  const items = docs.flatMap((d) => {
    const o = d as { kind?: string; items?: unknown[] } | null;
    return o?.kind === "List" && Array.isArray(o.items) ? o.items : [d];
  });
  const out: ClaimChange[] = [];
  items.forEach((raw, i) => {
    if (raw === null || raw === undefined) return;
    const o = raw as {
      kind?: string;
      metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
      spec?: {
        instanceHost?: string;
        port?: number;
        enhancements?: Record<string, unknown>[];
        compositionRef?: { name?: string };
        compositionSelector?: { matchLabels?: Record<string, string> };
      };
    };
    const where = `${file}: document ${i + 1}`;
    if (o.kind !== "TCPConnection")
      throw new Error(`${where} is a ${o.kind ?? "document without kind"}, not a TCPConnection`);
    const name = o.metadata?.name;
    const namespace = o.metadata?.namespace;
    if (!name || !namespace)
      throw new Error(`${where}: a TCPConnection needs metadata.name and metadata.namespace`);
    const action = o.metadata?.annotations?.[DELETE_ANNOTATION] === "delete" ? "delete" : "apply";
    const ref = o.spec?.compositionRef?.name?.replace(/^xtcpconnections-/, "");
    const selected = o.spec?.compositionSelector?.matchLabels?.["klutch.anynines.com/implementation"];
    const implementation = ref ?? selected ?? defaultImplementation;
    if (
      action === "apply" &&
      (typeof o.spec?.instanceHost !== "string" || typeof o.spec?.port !== "number")
    ) {
      throw new Error(`${where} (${namespace}/${name}): spec.instanceHost and spec.port are required`);
    }
    out.push({
      action,
      namespace,
      name,
      implementation,
      instanceHost: o.spec?.instanceHost ?? "",
      port: o.spec?.port ?? 0,
      ...(o.spec?.enhancements ? { enhancements: o.spec.enhancements } : {}),
    });
  });
  return out;
}
