/**
 * Renders any Vega-Lite spec to an SVG string in Node: no browser, canvas or DOM. This is the one
 * place ipipe touches vega's runtime, so its quirks are handled here once:
 *
 * - **Deterministic bytes.** Vega numbers clip paths and gradients from process-wide counters
 *   (`clip1`, `gradient_0`, …), so the same chart drawn twice in one process would differ, and two
 *   charts inlined in one HTML page would share ids (the second would clip with the first's path).
 *   We renumber every id in order of appearance and prefix it with a hash of the chart, so equal
 *   data gives byte-identical SVG and different charts never collide.
 * - **No I/O.** A spec may name a data URL or an image; the default loader would read files or the
 *   network. Reports draw inline data only, so the loader refuses everything.
 * - **No console noise.** Vega and Vega-Lite warn through `console`; the CLI keeps stdout for
 *   results, so warnings go to a callback (default: `process.emitWarning`, i.e. stderr).
 * - **One house style.** A base config (larger fonts than vega's 10 px defaults, a white
 *   background) is merged under the spec's own `config`, so any spec rendered here matches.
 */

import * as vega from 'vega';
import type { Config, TopLevelSpec } from 'vega-lite';
import { compile } from 'vega-lite';
import { ConfigError } from '../errors.ts';

/** A Vega-Lite spec (any kind: unit, layer, concat, facet) as vega-lite 6.4 types it. */
export type VegaLiteSpec = TopLevelSpec;

/** Options for {@link renderSvg}. */
export interface RenderSvgOptions {
  /**
   * Receives each warning from vega-lite's compiler and vega's runtime (e.g. a field that is not in
   * the data). Default: `process.emitWarning`, which prints to stderr once per message.
   */
  readonly onWarning?: (message: string) => void;
}

/**
 * The house style. Sizes are chosen for a chart read on a laptop screen or a printed page at
 * ~100 % zoom: vega's 10 px labels are too small once a 480 px chart is scaled into a report.
 */
export const REPORT_CHART_CONFIG: Config = {
  background: 'white',
  font: 'Helvetica, Arial, sans-serif',
  padding: 8,
  title: { fontSize: 16, fontWeight: 'bold', anchor: 'start', offset: 10 },
  axis: {
    labelFontSize: 12,
    titleFontSize: 13,
    titleFontWeight: 'normal',
    titlePadding: 8,
    gridColor: '#e6e6e6',
    domainColor: '#666',
    tickColor: '#666',
    labelLimit: 200,
  },
  legend: {
    labelFontSize: 12,
    titleFontSize: 12,
    titleFontWeight: 'normal',
    symbolSize: 90,
    labelLimit: 220,
  },
  view: { stroke: '#ccc' },
  line: { strokeWidth: 2 },
  point: { size: 55 },
  bar: { cornerRadiusEnd: 0 },
  // Category colours: tableau10, distinguishable in print and for common colour-vision deficiencies.
  range: { category: { scheme: 'tableau10' } },
};

/**
 * Renders a Vega-Lite spec to a standalone SVG document string. Same spec → byte-identical
 * output (see the header comment). Throws `ConfigError` when the spec does not compile or names
 * external data.
 */
export async function renderSvg(spec: VegaLiteSpec, options: RenderSvgOptions = {}): Promise<string> {
  const warn = options.onWarning ?? defaultWarning;
  const logger = renderLogger();
  const refusals: string[] = [];
  let runtime: vega.Runtime;
  try {
    runtime = vega.parse(compile(spec, { config: REPORT_CHART_CONFIG, logger }).spec);
  } catch (error) {
    throw new ConfigError('chart', `the Vega-Lite spec does not compile: ${messageOf(error)}`, {
      cause: error,
    });
  }
  // The view logs through `logger` too; logLevel Warn keeps vega's info/debug chatter out.
  const view = new vega.View(runtime, {
    renderer: 'none',
    loader: refusingLoader(refusals),
    logger,
    logLevel: vega.Warn,
  });
  try {
    const svg = await view.toSVG();
    if (refusals.length > 0) {
      throw new ConfigError(
        'chart',
        `charts draw inline data only (\`data: { values: rows }\`); refused ${refusals.join(', ')}`,
      );
    }
    if (logger.errors.length > 0) throw new Error(logger.errors.join('; '));
    // Warnings are passed on only for a chart that was drawn: a failed one already throws.
    for (const message of logger.warnings) warn(message);
    return normaliseSvgIds(svg);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError('chart', `the chart could not be drawn: ${messageOf(error)}`, { cause: error });
  } finally {
    // Releases the view's dataflow and timers; without it a long report run keeps every view alive.
    view.finalize();
  }
}

/**
 * Rewrites every `id="…"` in an SVG (and its `url(#…)`/`href="#…"` references) to
 * `<prefix>-<n>`, numbered in order of appearance; the prefix is a hash of the SVG with its ids
 * blanked, so it depends only on what is drawn. Exported for tests and for SVGs from elsewhere.
 */
export function normaliseSvgIds(svg: string): string {
  const ids: string[] = [];
  for (const match of svg.matchAll(/\sid="([^"]+)"/g)) {
    const id = match[1];
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  }
  if (ids.length === 0) return svg;
  // Blank the ids and every reference to them, so the hash sees only what is drawn.
  const blanked = svg
    .replace(/\sid="[^"]+"/g, ' id=""')
    .replace(/url\(#[^)]+\)/g, 'url(#)')
    .replace(/href="#[^"]+"/g, 'href="#"');
  const prefix = `c${fnv1a32(blanked).toString(16).padStart(8, '0')}`;
  const renamed = new Map(ids.map((id, index) => [id, `${prefix}-${index + 1}`]));
  // One pass over ids and both reference forms, so a new name can never be rewritten again.
  return svg.replace(/(\sid=")([^"]+)(")|(url\(#)([^)]+)(\))|(href="#)([^"]+)(")/g, (...groups: string[]) => {
    for (const start of [1, 4, 7]) {
      const name = groups[start + 1];
      if (name === undefined) continue;
      const next = renamed.get(name);
      return next === undefined ? (groups[0] ?? '') : `${groups[start]}${next}${groups[start + 2]}`;
    }
    return groups[0] ?? '';
  });
}

/** 32-bit FNV-1a over UTF-16 code units: tiny, stable, and enough to tell charts apart. */
function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * A loader that reads nothing: report charts never fetch URLs or files. vega only *warns* when a
 * load fails and draws the chart without that data, so each refusal is also recorded and
 * `renderSvg` turns it into an error instead of returning a silently empty chart.
 */
function refusingLoader(refusals: string[]): vega.Loader {
  const refuse = (what: string): Promise<never> => {
    refusals.push(what);
    return Promise.reject(new Error(`refused ${what}`));
  };
  return {
    load: (uri) => refuse(`loading "${uri}"`),
    sanitize: (uri) => refuse(`loading "${uri}"`),
    http: (uri) => refuse(`fetching "${uri}"`),
    file: (filename) => refuse(`reading "${filename}"`),
  };
}

/**
 * vega's and vega-lite's logger interface. Warnings are kept for the caller's callback; errors are
 * kept so `renderSvg` can throw them (vega's dataflow logs an error and carries on, which would
 * otherwise yield a silently incomplete chart); info and debug are dropped.
 */
interface RenderLogger extends vega.LoggerInterface {
  readonly errors: string[];
  readonly warnings: string[];
}

function renderLogger(): RenderLogger {
  let level = vega.Warn;
  const logger: RenderLogger = {
    errors: [],
    warnings: [],
    level(next?: number) {
      if (next === undefined) return level;
      level = next;
      return logger;
    },
    error(...parts: readonly unknown[]) {
      logger.errors.push(parts.map(messageOf).join(' '));
      return logger;
    },
    warn(...parts: readonly unknown[]) {
      logger.warnings.push(parts.map(messageOf).join(' '));
      return logger;
    },
    info: () => logger,
    debug: () => logger,
  };
  return logger;
}

function defaultWarning(message: string): void {
  process.emitWarning(message, { code: 'IPIPE_CHART_WARNING' });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
