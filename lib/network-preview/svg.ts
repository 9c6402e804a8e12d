import { riskWords } from "./model";
import { endpointChange } from "./render";
import { RISKS, type NetworkPreviewReport, type Risk } from "./schema";

/**
 * The change diagram as a standalone SVG file (the Mermaid in the Markdown needs a renderer;
 * this one opens anywhere): consumer → endpoint before → after → instance, one row per
 * connection, the endpoint box filled by its risk; widened exposure in red below; a legend.
 * Pure and deterministic, so it has golden files like the other formats.
 */

/** Fill and stroke per risk: the Mermaid diagram's colours (render.ts), so both read alike. */
export const RISK_FILL: Record<Risk, { fill: string; stroke: string; dash?: boolean }> = {
  none: { fill: "#eeeeee", stroke: "#999999" },
  added: { fill: "#d4f7d4", stroke: "#2e7d32" },
  removed: { fill: "#e0e0e0", stroke: "#616161", dash: true },
  unknown: { fill: "#fff3c4", stroke: "#b08900" },
  "endpoint-changed": { fill: "#ffe0b2", stroke: "#e65100" },
  interruption: { fill: "#ffe0b2", stroke: "#e65100" },
  broken: { fill: "#ffcdd2", stroke: "#b71c1c" },
};

const W = 1000;
const ROW = 64;
const TOP = 90;
const COL = { consumer: 20, endpoint: 330, instance: 770 };
const BOX = { consumer: 200, endpoint: 380, instance: 210, h: 44 };
const FONT = 'font-family="DejaVu Sans, Arial, sans-serif"';

export function xml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** Long texts are cut to what fits a box (about 7 px per character at 12 px). */
function fit(s: string, width: number): string {
  const max = Math.floor((width - 16) / 7);
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

function box(
  x: number,
  y: number,
  w: number,
  fill: string,
  stroke: string,
  dash: boolean,
  lines: string[],
): string {
  const rect = `<rect x="${x}" y="${y}" width="${w}" height="${BOX.h}" rx="8" fill="${fill}" stroke="${stroke}" stroke-width="2"${dash ? ' stroke-dasharray="6 4"' : ""}/>`;
  const text = lines
    .map(
      (l, i) =>
        `<text x="${x + 8}" y="${y + 18 + i * 16}" font-size="12" ${FONT} fill="#212121">${xml(fit(l, w))}</text>`,
    )
    .join("");
  return rect + text;
}

function arrow(x1: number, x2: number, y: number, colour: string, label?: string): string {
  const line = `<line x1="${x1}" y1="${y}" x2="${x2 - 6}" y2="${y}" stroke="${colour}" stroke-width="2" marker-end="url(#arrow)"/>`;
  return label
    ? `${line}<text x="${(x1 + x2) / 2}" y="${y - 6}" font-size="11" ${FONT} text-anchor="middle" fill="${colour}">${xml(label)}</text>`
    : line;
}

/** "exit 4 — consumers affected (…)" of the summary line, and what follows its colon. */
const headOf = (line: string) => line.slice(0, line.indexOf(":") < 0 ? line.length : line.indexOf(":"));
const tailOf = (line: string) => line.slice(line.indexOf(":") + 1).trim();

export function renderSvg(report: NetworkPreviewReport): string {
  const rows = report.connections;
  const widened = report.exposure.widened;
  const used = RISKS.filter((r) => rows.some((c) => c.risk === r));
  const height =
    TOP + Math.max(1, rows.length) * ROW + (widened.length > 0 ? 40 + widened.length * ROW : 0) + 60;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#424242"/></marker></defs>',
    `<rect width="${W}" height="${height}" fill="#ffffff"/>`,
    // The summary line's grade first, in bold, and the rest below it: it never runs off the picture.
    `<text x="20" y="26" font-size="15" font-weight="bold" ${FONT} fill="#212121">${xml(`Network preview: ${headOf(report.summary.line)}`)}</text>`,
    `<text x="20" y="46" font-size="12" ${FONT} fill="#212121">${xml(fit(tailOf(report.summary.line), W - 40))}</text>`,
    `<text x="${COL.consumer}" y="76" font-size="12" ${FONT} fill="#616161">consumer</text>`,
    `<text x="${COL.endpoint}" y="76" font-size="12" ${FONT} fill="#616161">connection: endpoint before → after</text>`,
    `<text x="${COL.instance}" y="76" font-size="12" ${FONT} fill="#616161">instance</text>`,
  ];
  if (rows.length === 0) {
    out.push(
      `<text x="${COL.consumer}" y="${TOP + 26}" font-size="13" ${FONT} fill="#616161">no connection is changed</text>`,
    );
  }
  rows.forEach((c, i) => {
    const y = TOP + i * ROW;
    const mid = y + BOX.h / 2;
    const style = RISK_FILL[c.risk];
    const consumer = c.consumer.cluster
      ? `${c.consumer.cluster}/${c.consumer.namespace}`
      : c.consumer.namespace;
    out.push(box(COL.consumer, y, BOX.consumer, "#ffffff", "#757575", false, [consumer]));
    out.push(arrow(COL.consumer + BOX.consumer, COL.endpoint, mid, style.stroke, riskWords(c.risk)));
    out.push(
      box(COL.endpoint, y, BOX.endpoint, style.fill, style.stroke, style.dash === true, [
        c.id,
        endpointChange(c),
      ]),
    );
    out.push(arrow(COL.endpoint + BOX.endpoint, COL.instance, mid, "#424242"));
    out.push(
      box(COL.instance, y, BOX.instance, "#ffffff", "#757575", false, [
        `${c.instance.host}:${c.instance.port}`,
      ]),
    );
  });
  let y = TOP + Math.max(1, rows.length) * ROW;
  if (widened.length > 0) {
    out.push(
      `<text x="${COL.consumer}" y="${y + 24}" font-size="13" font-weight="bold" ${FONT} fill="#b71c1c">exposure widened</text>`,
    );
    y += 40;
    for (const r of widened) {
      const ports = r.ports.from === r.ports.to ? `${r.ports.from}` : `${r.ports.from}-${r.ports.to}`;
      out.push(box(COL.consumer, y, BOX.consumer, "#ffcdd2", "#b71c1c", false, [r.source]));
      out.push(arrow(COL.consumer + BOX.consumer, COL.endpoint, y + BOX.h / 2, "#b71c1c", "widened"));
      out.push(
        box(
          COL.endpoint,
          y,
          BOX.endpoint + COL.instance - COL.endpoint - BOX.endpoint + BOX.instance,
          "#ffcdd2",
          "#b71c1c",
          false,
          [`${r.destination} ${r.protocol}/${ports}`, r.why],
        ),
      );
      y += ROW;
    }
  }
  // Legend: the risks that occur, in their order of severity.
  let x = COL.consumer;
  const ly = height - 36;
  for (const r of used) {
    const s = RISK_FILL[r];
    out.push(
      `<rect x="${x}" y="${ly}" width="16" height="16" rx="3" fill="${s.fill}" stroke="${s.stroke}" stroke-width="2"${s.dash ? ' stroke-dasharray="3 2"' : ""}/>`,
      `<text x="${x + 22}" y="${ly + 13}" font-size="12" ${FONT} fill="#212121">${xml(riskWords(r))}</text>`,
    );
    x += 40 + riskWords(r).length * 7;
  }
  out.push("</svg>");
  return `${out.join("\n")}\n`;
}
