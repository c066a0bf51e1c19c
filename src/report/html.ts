/**
 * A small self-contained HTML report: one file that opens anywhere (no network, no scripts) with a
 * title, and sections of prose, an inline SVG chart and a table each. Experiments use it to put
 * their charts and numbers side by side with a sentence on what to read from them.
 *
 * Safety: every piece of text (title, headings, prose, table cells, captions) is HTML-escaped.
 * SVG is markup, so it cannot be escaped; it is accepted only if it looks like a chart
 * (`renderSvg`'s output does) — no `<script>`, `<foreignObject>`, event-handler attributes or
 * `javascript:` URLs — and a Content-Security-Policy forbids scripts in the page anyway.
 * Output is deterministic: nothing time- or machine-dependent is added; pass the run's date or
 * seed in `subtitle` if the reader needs them.
 */

import { ConfigError } from '../errors.ts';
import { cellOf, columnsOf } from './rows.ts';

/** A table of rows; each row maps column name → cell. */
export interface HtmlTable {
  /** The rows, one table row each. Values: string, number, bigint, boolean, or null/absent (—). */
  readonly rows: readonly object[];
  /** Column order; default every key in order of first appearance. */
  readonly columns?: readonly string[];
  /** A caption shown above the table. */
  readonly caption?: string;
}

/** One section of the report, shown in this order: heading, text, chart, table. */
export interface HtmlSection {
  readonly heading: string;
  /** Prose; a blank line starts a new paragraph, a single newline breaks the line. */
  readonly text?: string;
  /** An SVG document, typically from `lineChart`/`barChart`/`renderSvg`. */
  readonly svg?: string;
  readonly table?: HtmlTable;
}

/** Options for {@link htmlReport}. */
export interface HtmlReportOptions {
  readonly title: string;
  /** A line under the title: the run's settings, seed, hardware profile, date. */
  readonly subtitle?: string;
  readonly sections: readonly HtmlSection[];
}

/**
 * No scripts, no external fetches: a report is a document. Inline styles only (our own CSS), and
 * images only as data URLs (none today, but a future embedded PNG should not need a policy change).
 */
const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

const STYLE = `
body { font: 15px/1.5 Helvetica, Arial, sans-serif; color: #222; background: #fff; margin: 0; }
main { max-width: 960px; margin: 0 auto; padding: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
.subtitle { color: #555; margin: 0 0 24px; }
section { margin: 32px 0; }
h2 { font-size: 19px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
figure { margin: 16px 0; overflow-x: auto; }
figure svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin: 16px 0; font-size: 14px; }
caption { text-align: left; font-weight: bold; padding-bottom: 6px; }
th, td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; }
th { background: #f4f4f4; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.missing { color: #999; text-align: center; }
`.trim();

/** Builds the report as one HTML document string. Throws `ConfigError` for an unsafe SVG. */
export function htmlReport(options: HtmlReportOptions): string {
  const parts: string[] = [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(CONTENT_SECURITY_POLICY)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(options.title)}</title>`,
    `<style>\n${STYLE}\n</style>`,
    '</head>',
    '<body>',
    '<main>',
    `<h1>${escapeHtml(options.title)}</h1>`,
  ];
  if (options.subtitle !== undefined) parts.push(`<p class="subtitle">${escapeHtml(options.subtitle)}</p>`);
  options.sections.forEach((section, index) => {
    parts.push('<section>', `<h2>${escapeHtml(section.heading)}</h2>`);
    if (section.text !== undefined) parts.push(paragraphs(section.text));
    if (section.svg !== undefined) {
      parts.push(`<figure>${checkedSvg(section.svg, `sections[${index}].svg`)}</figure>`);
    }
    if (section.table !== undefined) parts.push(tableHtml(section.table));
    parts.push('</section>');
  });
  parts.push('</main>', '</body>', '</html>', '');
  return parts.join('\n');
}

/** Escapes the five characters that matter in HTML text and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ENTITIES[character] ?? character);
}

const HTML_ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Renders a table; numbers right-aligned and grouped for reading (the CSV keeps exact values). */
export function tableHtml(table: HtmlTable): string {
  const columns = table.columns ?? columnsOf(table.rows);
  const lines = ['<table>'];
  if (table.caption !== undefined) lines.push(`<caption>${escapeHtml(table.caption)}</caption>`);
  lines.push(`<thead><tr>${columns.map((column) => `<th>${escapeHtml(column)}</th>`).join('')}</tr></thead>`);
  lines.push('<tbody>');
  for (const row of table.rows) {
    const cells = columns.map((column) => cellHtml(cellOf(row, column)));
    lines.push(`<tr>${cells.join('')}</tr>`);
  }
  lines.push('</tbody>', '</table>');
  return lines.join('\n');
}

function cellHtml(value: unknown): string {
  if (value === null || value === undefined) return '<td class="missing">—</td>';
  if (typeof value === 'number') return `<td class="num">${escapeHtml(formatNumber(value))}</td>`;
  if (typeof value === 'bigint') return `<td class="num">${escapeHtml(value.toLocaleString('en-US'))}</td>`;
  if (typeof value === 'string' || typeof value === 'boolean') return `<td>${escapeHtml(String(value))}</td>`;
  // An object in a cell is a caller's slip; show it rather than fail the whole report.
  return `<td>${escapeHtml(JSON.stringify(value) ?? String(value))}</td>`;
}

/**
 * Integers with thousands separators, others to 4 significant digits: enough to compare rows by
 * eye. A fixed locale keeps the report identical on every machine.
 */
function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumSignificantDigits: 4 });
}

function paragraphs(text: string): string {
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph !== '')
    .map((paragraph) => `<p>${paragraph.split(/\r?\n/).map(escapeHtml).join('<br>\n')}</p>`)
    .join('\n');
}

/**
 * Accepts an SVG document for inlining: drops an XML prolog or doctype (invalid inside HTML) and
 * refuses anything that could run code. Attributes are read per tag, so text that merely mentions
 * `onload=` inside a quoted value (a data label) is not mistaken for a handler.
 */
function checkedSvg(svg: string, where: string): string {
  const body = svg
    .trim()
    .replace(/^<\?xml[^>]*\?>\s*/, '')
    .replace(/^<!DOCTYPE[^>]*>\s*/i, '');
  if (!/^<svg[\s>]/.test(body) || !/<\/svg>$/.test(body)) {
    throw new ConfigError(where, 'is not an SVG document (expected "<svg …>…</svg>", e.g. from renderSvg)');
  }
  const unsafe = (reason: string) =>
    new ConfigError(where, `refused: the SVG contains ${reason}; only static charts can be inlined`);
  for (const tag of body.matchAll(
    /<([A-Za-z][\w:.-]*)((?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*\/?>/g,
  )) {
    const element = (tag[1] ?? '').toLowerCase();
    if (element === 'script' || element === 'foreignobject' || element === 'iframe' || element === 'embed') {
      throw unsafe(`a <${tag[1]}> element`);
    }
    for (const attribute of (tag[2] ?? '').matchAll(/\s+([^\s=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?/g)) {
      const name = (attribute[1] ?? '').toLowerCase();
      const value = (attribute[2] ?? '')
        .replace(/^["']|["']$/g, '')
        .trim()
        .toLowerCase();
      if (name.startsWith('on')) throw unsafe(`an event handler attribute (${attribute[1]})`);
      if ((name === 'href' || name === 'xlink:href') && value.startsWith('javascript:')) {
        throw unsafe('a javascript: link');
      }
    }
  }
  // A tag the pattern above could not read (malformed) might hide anything: refuse rather than guess.
  if (/<\s*(script|foreignobject)/i.test(body)) throw unsafe('a <script> or <foreignObject> element');
  return body;
}
