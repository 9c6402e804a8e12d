import { SECRET_SIG } from "../pulumi-secret";
import { endpointText, riskWords } from "./model";
import { UNKNOWN, type ConnectionReport, type NetworkPreviewReport, type Risk } from "./schema";

/** GitHub refuses issue and PR comments longer than this many characters. */
export const GITHUB_COMMENT_LIMIT = 65536;

const SECRET_KEY = /(secret|password|passphrase|token|private.?key|kubeconfig|credential)/i;
const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
export const REDACTED = "[redacted]";

/** A deep copy with secrets replaced: secret-looking keys, Pulumi secret values, private keys. */
export function redact(value: unknown, key = ""): unknown {
  if (SECRET_KEY.test(key) && value !== null && value !== undefined && typeof value !== "boolean")
    return REDACTED;
  if (typeof value === "string") return PEM.test(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (typeof value === "object" && value !== null) {
    if (SECRET_SIG in value) return REDACTED;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  }
  return value;
}

export function renderJson(report: NetworkPreviewReport): string {
  return `${JSON.stringify(redact(report), null, 2)}\n`;
}

const RISK_COLOUR: Record<Risk, string> = {
  none: "fill:#eeeeee,stroke:#999999",
  added: "fill:#d4f7d4,stroke:#2e7d32",
  removed: "fill:#e0e0e0,stroke:#616161,stroke-dasharray:4",
  unknown: "fill:#fff3c4,stroke:#b08900",
  "endpoint-changed": "fill:#ffe0b2,stroke:#e65100",
  interruption: "fill:#ffe0b2,stroke:#e65100",
  broken: "fill:#ffcdd2,stroke:#b71c1c",
};

const mermaidText = (s: string) => s.replace(/["<>]/g, "'").replace(/[\r\n]+/g, " ");
const riskClass = (r: Risk) => `r_${r.replace(/-/g, "_")}`;

/**
 * The change as a Mermaid flowchart: consumer namespace → endpoint (before → after) →
 * instance, each endpoint node coloured by its connection's risk; widened rules in red.
 */
export function renderMermaid(report: NetworkPreviewReport): string {
  const lines = ["flowchart LR"];
  const ids = new Map<string, string>();
  const node = (key: string, label: string, shape: "round" | "box" = "box") => {
    let id = ids.get(key);
    if (!id) {
      id = `n${ids.size}`;
      ids.set(key, id);
      lines.push(
        shape === "round" ? `  ${id}(["${mermaidText(label)}"])` : `  ${id}["${mermaidText(label)}"]`,
      );
    }
    return id;
  };
  const used = new Set<Risk>();
  report.connections.forEach((c, i) => {
    const consumer = node(`c:${c.consumer.cluster ?? ""}/${c.consumer.namespace}`, consumerText(c), "round");
    const instance = node(`i:${c.instance.host}:${c.instance.port}`, `${c.instance.host}:${c.instance.port}`);
    const ep = `e${i}`;
    lines.push(
      `  ${ep}["${mermaidText(c.id)}<br/>${mermaidText(endpointChange(c))}"]:::${riskClass(c.risk)}`,
    );
    lines.push(`  ${consumer} -->|${mermaidText(riskWords(c.risk))}| ${ep} --> ${instance}`);
    used.add(c.risk);
  });
  for (const r of report.exposure.widened) {
    const src = node(`s:${r.source}`, r.source, "round");
    const dst = node(`d:${r.destination}`, `${r.destination} ${r.protocol}/${portsText(r.ports)}`);
    lines.push(`  ${src} -->|widened| ${dst}`);
    lines.push(`  linkStyle ${linkCount(lines) - 1} stroke:#b71c1c,stroke-width:3px`);
  }
  for (const r of used) lines.push(`  classDef ${riskClass(r)} ${RISK_COLOUR[r]}`);
  return lines.join("\n");
}

/** Mermaid numbers links in order of appearance; `a --> b --> c` counts twice. */
function linkCount(lines: string[]): number {
  return lines.reduce((n, l) => n + (l.match(/-->/g)?.length ?? 0), 0);
}

function consumerText(c: ConnectionReport): string {
  return c.consumer.cluster ? `${c.consumer.cluster}/${c.consumer.namespace}` : c.consumer.namespace;
}

function portsText(p: { from: number; to: number }): string {
  return p.from === p.to ? String(p.from) : `${p.from}-${p.to}`;
}

/** A connection's endpoint as one line: "+ new", "− old", or "before → after". */
export function endpointChange(c: ConnectionReport): string {
  if (c.change === "add") return `+ ${endpointText(c.after)}`;
  if (c.change === "delete") return `− ${endpointText(c.before)}`;
  const b = endpointText(c.before);
  const a = endpointText(c.after);
  return b === a ? b : `${b} → ${a}`;
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** A part of the Markdown: kept whole (atomic) or trimmed row by row. */
interface Section {
  head: string;
  rows: string[];
  tail: string;
  atomic?: boolean;
}

/**
 * Markdown for a PR comment: the summary line first, the connections table, then the
 * details folded. Kept under `limit` characters by trimming the details (rows, then whole
 * sections) and saying so; the summary and the trimming note are never cut.
 */
export function renderMarkdown(report: NetworkPreviewReport, limit = GITHUB_COMMENT_LIMIT): string {
  const s = report.summary;
  const head = `**Network preview: ${s.line}**\n\n`;
  const sections: Section[] = [];
  sections.push({
    head: "| connection | consumer | instance | before | after | risk |\n| --- | --- | --- | --- | --- | --- |\n",
    rows: report.connections.map(
      (c) =>
        `| ${cell(c.id)} | ${cell(consumerText(c))} | ${c.instance.host}:${c.instance.port} | ${endpointText(c.before)} | ${endpointText(c.after)} | **${riskWords(c.risk)}** |\n`,
    ),
    tail: "\n",
  });
  if (report.exposure.widened.length > 0) {
    sections.push({
      head: "**Exposure widened**\n\n| source | destination | protocol/ports | why |\n| --- | --- | --- | --- |\n",
      rows: report.exposure.widened.map(
        (r) =>
          `| ${r.source} | ${cell(r.destination)} | ${r.protocol}/${portsText(r.ports)} | ${cell(r.why)} |\n`,
      ),
      tail: "\n",
    });
  }
  if (report.connections.length > 0 || report.exposure.widened.length > 0) {
    sections.push({
      head: "<details><summary>Diagram</summary>\n\n```mermaid\n",
      rows: [`${renderMermaid(report)}\n`],
      tail: "```\n\n</details>\n\n",
      atomic: true,
    });
  }
  const reasonRows = report.connections
    .filter((c) => c.risk !== "none")
    .map((c) => `- \`${c.id}\` (${riskWords(c.risk)}): ${c.reasons.join("; ")}\n`);
  if (reasonRows.length > 0) sections.push(folded("Why", "", reasonRows));
  const hopRows = report.connections.flatMap((c) =>
    c.hops
      .filter((h) => h.op !== "same")
      .map(
        (h) =>
          `| ${cell(c.id)} | ${h.kind} | ${h.op}${h.deleteBeforeReplace ? " (delete first)" : ""} | ${cell(h.diffPaths.join(", ") || "—")} | ${cell(h.detail ?? "")} | \`${cell(h.urn)}\` |\n`,
      ),
  );
  if (hopRows.length > 0) {
    sections.push(
      folded(
        "Hops",
        "| connection | hop | operation | changed | detail | URN |\n| --- | --- | --- | --- | --- | --- |\n",
        hopRows,
      ),
    );
  }
  if (report.otherChanges.length > 0) {
    sections.push(
      folded(
        "Other changes",
        "| kind | operation | changed | URN |\n| --- | --- | --- | --- |\n",
        report.otherChanges.map(
          (h) => `| ${h.kind} | ${h.op} | ${cell(h.diffPaths.join(", ") || "—")} | \`${cell(h.urn)}\` |\n`,
        ),
      ),
    );
  }
  const p = report.ports;
  const portRows = [
    ...p.reassigned.map((r) => `- \`${r.id}\` moves ${r.from} → ${r.to} (${r.group})\n`),
    ...p.allocated.map((r) => `- \`${r.id}\` gets ${r.port} (${r.group})\n`),
    ...p.freed.map((r) => `- ${r.port} freed by \`${r.id}\` (${r.group})\n`),
    ...p.unplaced.map((r) => `- \`${r.id}\` gets no port: range full (${r.group})\n`),
    ...p.groups.map(
      (g) =>
        `- ${g.group}: range ${g.rangeBefore && portsText(g.rangeBefore) !== portsText(g.rangeAfter) ? `${portsText(g.rangeBefore)} → ` : ""}${portsText(g.rangeAfter)}, ${g.used} used, headroom ${g.headroom === UNKNOWN ? "unknown" : g.headroom}\n`,
    ),
  ];
  if (portRows.length > 0) sections.push(folded("Ports", "", portRows));
  if (report.blastRadius.length > 0) {
    sections.push(
      folded(
        "Blast radius",
        "| changed hop | operation | connections | namespaces | clusters |\n| --- | --- | --- | --- | --- |\n",
        report.blastRadius.map(
          (b) => `| \`${cell(b.urn)}\` | ${b.op} | ${b.connections} | ${b.namespaces} | ${b.clusters} |\n`,
        ),
      ),
    );
  }
  const e = report.exposure;
  if (e.added.length + e.removed.length > 0) {
    sections.push(
      folded("Exposure", "| change | source | destination | protocol/ports |\n| --- | --- | --- | --- |\n", [
        ...e.added.map(
          (r) => `| added | ${r.source} | ${cell(r.destination)} | ${r.protocol}/${portsText(r.ports)} |\n`,
        ),
        ...e.removed.map(
          (r) => `| removed | ${r.source} | ${cell(r.destination)} | ${r.protocol}/${portsText(r.ports)} |\n`,
        ),
      ]),
    );
  }
  if (report.policy.length > 0) {
    sections.push({
      head: "**Policy** (CrossGuard on the planned state)\n\n| policy | enforcement | resource | message |\n| --- | --- | --- | --- |\n",
      rows: report.policy.map(
        (x) =>
          `| ${x.policy} | ${x.enforcement} | ${x.urn ? `\`${cell(x.urn.slice(x.urn.lastIndexOf("::") + 2))}\`` : "—"} | ${cell(x.message)} |\n`,
      ),
      tail: "\n",
    });
  }
  const c = report.cost;
  const traffic = c.traffic;
  if (c.estimated && c.items.length + c.unpriced.length + (traffic?.items.length ?? 0) > 0) {
    const trafficHead = !traffic
      ? ""
      : traffic.monthlyDeltaUsd !== undefined
        ? `, traffic ${usd(traffic.monthlyDeltaUsd)}/month at ${traffic.gbPerMonth} GB`
        : `, plus ${traffic.items.map((i) => usdPerGb(i.usdPerGb)).join(" ")} per GB of traffic`;
    sections.push(
      folded(
        `Cost estimate: ${usd(c.monthlyDeltaUsd ?? 0)}/month${trafficHead}`,
        "| resource | operation | monthly (estimate) | list price |\n| --- | --- | --- | --- |\n",
        [
          ...c.items.map(
            (i) =>
              `| \`${cell(i.urn.slice(i.urn.lastIndexOf("::") + 2))}\` (${i.type}) | ${i.op} | ${usd(i.monthlyUsd)} | ${cell(i.what)}; ${cell(i.source)} |\n`,
          ),
          ...c.unpriced.map(
            (i) =>
              `| \`${cell(i.urn.slice(i.urn.lastIndexOf("::") + 2))}\` (${i.type}) | ${i.op} | unpriced | ${cell(i.why)} |\n`,
          ),
          ...(traffic?.items ?? []).map(
            (i) =>
              `| \`${cell(i.urn.slice(i.urn.lastIndexOf("::") + 2))}\` (${i.type}) | ${i.op} | ${usdPerGb(i.usdPerGb)}/GB${i.monthlyUsd !== undefined ? ` × ${traffic?.gbPerMonth} GB = ${usd(i.monthlyUsd)}` : ""} | ${cell(i.what)}; ${cell(i.source)} |\n`,
          ),
        ],
      ),
    );
  }
  const noteRows = [
    `- cost: ${c.estimated ? `${usd(c.monthlyDeltaUsd ?? 0)}/month, ` : ""}${c.note}\n`,
    ...report.notes.map((n) => `- ${n}\n`),
    `- sources: ${report.sources.map((x) => `${x.kind} \`${x.ref}\``).join(", ")}; schema ${report.schemaVersion}\n`,
  ];
  sections.push(folded("Notes", "", noteRows));
  return fit(head, sections, limit);
}

/** A signed per-GB price: "+$0.045", "−$0.01" (three decimals where the price has them). */
export function usdPerGb(n: number): string {
  const abs = `$${Number(Math.abs(n).toFixed(3))}`;
  return n > 0 ? `+${abs}` : n < 0 ? `−${abs}` : abs;
}

/** A signed dollar amount: "+$32.85", "−$3.65", "$0.00". */
export function usd(n: number): string {
  const abs = `$${Math.abs(n).toFixed(2)}`;
  return n > 0 ? `+${abs}` : n < 0 ? `−${abs}` : abs;
}

function folded(title: string, tableHead: string, rows: string[]): Section {
  return { head: `<details><summary>${title}</summary>\n\n${tableHead}`, rows, tail: "\n</details>\n\n" };
}

function fit(head: string, sections: Section[], limit: number): string {
  const note = (rows: number, whole: number) =>
    `\n_Trimmed to fit a GitHub comment: ${rows} detail rows and ${whole} sections left out; the JSON report has everything._\n`;
  // Room for the note at its longest, so adding it never pushes the text over the limit.
  const reserve = note(999_999, 99).length;
  let out = head;
  let droppedRows = 0;
  let droppedSections = 0;
  for (const sec of sections) {
    const whole = sec.head.length + sec.rows.reduce((n, r) => n + r.length, 0) + sec.tail.length;
    if (out.length + whole + reserve <= limit) {
      out += sec.head + sec.rows.join("") + sec.tail;
      continue;
    }
    const marker = (n: number) =>
      sec.head.includes("| --- |") ? `| … | ${n} more rows trimmed |\n` : `- … ${n} more trimmed\n`;
    const trimmedRow = marker(sec.rows.length);
    if (sec.atomic || out.length + sec.head.length + sec.tail.length + trimmedRow.length + reserve > limit) {
      droppedSections++;
      continue;
    }
    let body = "";
    let kept = 0;
    for (const r of sec.rows) {
      const more = marker(sec.rows.length - kept - 1);
      if (
        out.length + sec.head.length + body.length + r.length + more.length + sec.tail.length + reserve >
        limit
      )
        break;
      body += r;
      kept++;
    }
    droppedRows += sec.rows.length - kept;
    out += sec.head + body + marker(sec.rows.length - kept) + sec.tail;
  }
  if (droppedRows + droppedSections > 0) out += note(droppedRows, droppedSections);
  return out;
}
