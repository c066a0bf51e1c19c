/**
 * The chart kinds the paper's experiments are read through, as typed builders of Vega-Lite specs
 * plus a one-call render to SVG:
 *
 * - line charts — throughput vs cores per packet size (the SmartNIC characterization), p99 latency
 *   vs load per scheduler (the scheduler comparison), with an optional *reference overlay*: the
 *   paper's published points as hollow diamonds beside the model's line, so a calibration chart
 *   shows model vs paper at a glance;
 * - bar charts — grouped (host cores used, host-only vs offloaded, per packet size) or stacked
 *   (migration time by phase).
 *
 * Builders validate the data before vega sees it (a NaN or a non-positive value on a log axis is a
 * `ConfigError` naming the row, not a silently missing point), keep categories in the order the
 * experiment produced them, and put units in axis titles. `…Spec` returns the spec (for the
 * dashboard, or to tweak); the plain name renders it.
 */

import { ConfigError } from '../errors.ts';
import { type RenderSvgOptions, renderSvg, type VegaLiteSpec } from './render-svg.ts';
import { cellOf, columnsOf, distinctValues, type FieldOf, type RowOf, requireFieldName } from './rows.ts';

/** How an axis maps values to positions. Log suits quantities spanning decades (latency, rates). */
export type ScaleKind = 'linear' | 'log';

/** One quantitative axis: which field it plots and how it is labelled. */
export interface AxisOptions<Field extends string = string> {
  /** The row field plotted on this axis. */
  readonly field: Field;
  /** The axis title, e.g. `Throughput`; the unit is appended as `Throughput (Gbps)`. */
  readonly title: string;
  /** The unit of the values (`Gbps`, `µs`, `cores`); omit only for counts without a unit. */
  readonly unit?: string;
  /** Default `linear`. A log axis needs every value > 0. */
  readonly scale?: ScaleKind;
  /** Whether a linear axis must include 0. Default: vega's (yes for quantitative axes). */
  readonly zero?: boolean;
}

/** The category axis of a bar chart (packet size, application, workload). */
export interface CategoryAxisOptions<Field extends string = string> {
  /** The row field whose values name the bars. */
  readonly field: Field;
  /** The axis title. */
  readonly title: string;
  /** The unit of the category values when they are numbers (`B` for packet sizes). */
  readonly unit?: string;
}

/** The bar length axis: linear only, since a bar's length from zero is what the reader compares. */
export interface BarValueAxisOptions<Field extends string = string> {
  /** The row field giving each bar's length. */
  readonly field: Field;
  /** The axis title. */
  readonly title: string;
  /** The unit of the values. */
  readonly unit?: string;
}

/** Published points drawn next to the model's line: a calibration chart's "paper" side. */
export interface ReferenceOverlay<Row> {
  /**
   * The published points, with the chart's x and y fields (and its series field, to be drawn in
   * that series' colour; a point without it is drawn in dark grey).
   */
  readonly rows: readonly Partial<Row>[];
  /** The legend label for these points, e.g. `iPipe paper, Fig. 3`. */
  readonly label: string;
}

/** Size in pixels of the plotting area (axes, title and legend are added around it). */
interface ChartSize {
  /** Default 480. */
  readonly width?: number;
  /** Default 300. */
  readonly height?: number;
}

/** Options for {@link lineChart} and {@link lineChartSpec}. */
export interface LineChartOptions<Row extends RowOf<Row>> extends ChartSize {
  /** The chart title; say what is measured and on what (`Echo throughput on LiquidIO CN2350`). */
  readonly title: string;
  /** A second title line, e.g. the seed and settings of the run. */
  readonly subtitle?: string;
  readonly x: AxisOptions<FieldOf<Row>>;
  readonly y: AxisOptions<FieldOf<Row>>;
  /** The field that splits rows into lines (one line and colour per distinct value). */
  readonly series?: FieldOf<Row>;
  /** The legend title for the series; default the series field's name. */
  readonly seriesTitle?: string;
  /** The measured or modelled points. `null` y values break the line there. */
  readonly rows: readonly Row[];
  /** Mark each data point on the line. Default true: readers compare exact measured points. */
  readonly points?: boolean;
  /** Published points to compare against, drawn as hollow diamonds. */
  readonly reference?: ReferenceOverlay<Row>;
  /** The legend label of the model's own points when a reference is shown. Default `model`. */
  readonly modelLabel?: string;
}

/** Options for {@link barChart} and {@link barChartSpec}. */
export interface BarChartOptions<Row extends RowOf<Row>> extends ChartSize {
  readonly title: string;
  readonly subtitle?: string;
  /** The categories along the x axis, in the order they first appear in `rows`. */
  readonly x: CategoryAxisOptions<FieldOf<Row>>;
  readonly y: BarValueAxisOptions<FieldOf<Row>>;
  /**
   * The field that splits each category into several bars (one colour per value), e.g.
   * `deployment` with values `host-only` and `offloaded`, or `phase` for a migration breakdown.
   */
  readonly group?: FieldOf<Row>;
  /** The legend title for the groups; default the group field's name. */
  readonly groupTitle?: string;
  /**
   * Stack the groups in one bar per category (parts of a whole: migration time by phase) instead
   * of placing them side by side (alternatives compared: host-only vs offloaded). Default false.
   * Stacking follows the group order of first appearance, bottom to top.
   */
  readonly stack?: boolean;
  readonly rows: readonly Row[];
}

const DEFAULT_WIDTH = 480;
const DEFAULT_HEIGHT = 300;
const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
/** Reference points without a series value: dark enough to read, outside the category palette. */
const REFERENCE_NEUTRAL_COLOR = '#333333';

/**
 * A Vega-Lite spec for a line chart: one line per `series` value, optional reference points.
 * Throws `ConfigError` for a bad field name or value (see {@link LineChartOptions}).
 */
export function lineChartSpec<Row extends RowOf<Row>>(options: LineChartOptions<Row>): VegaLiteSpec {
  const { x, y, rows, series, reference } = options;
  requireFieldName(x.field, 'lineChart.x.field');
  requireFieldName(y.field, 'lineChart.y.field');
  if (series !== undefined) requireFieldName(series, 'lineChart.series');
  checkPresent(rows, x.field, 'lineChart.x.field');
  checkPresent(rows, y.field, 'lineChart.y.field');
  if (series !== undefined) checkPresent(rows, series, 'lineChart.series');
  checkQuantitative(rows, x, 'lineChart.rows');
  checkQuantitative(rows, y, 'lineChart.rows');
  const referenceRows = reference?.rows ?? [];
  checkQuantitative(referenceRows, x, 'lineChart.reference.rows');
  checkQuantitative(referenceRows, y, 'lineChart.reference.rows');
  if (series !== undefined) {
    checkCategorical(rows, series, 'lineChart.rows', false);
    checkCategorical(referenceRows, series, 'lineChart.reference.rows', true);
  }
  const modelLabel = options.modelLabel ?? 'model';
  if (reference !== undefined && reference.label === modelLabel) {
    throw new ConfigError(
      'lineChart.reference.label',
      `"${reference.label}" is also the model's label; give the published points a distinct label`,
    );
  }

  const xEncoding = quantitativeEncoding(x);
  const yEncoding = quantitativeEncoding(y);
  const seriesDomain = series === undefined ? [] : distinctValues([...rows, ...referenceRows], series);
  const color =
    series === undefined
      ? undefined
      : {
          field: fieldRef(series),
          type: 'nominal',
          title: options.seriesTitle ?? series,
          scale: { domain: seriesDomain },
        };
  const sourceShape = (label: string) => ({
    datum: label,
    type: 'nominal',
    title: 'source',
    scale: { domain: [modelLabel, reference?.label ?? ''], range: ['circle', 'diamond'] },
  });

  const layers: object[] = [
    {
      data: { values: plotted(rows) },
      mark: { type: 'line' },
      encoding: { x: xEncoding, y: yEncoding, ...(color && { color }) },
    },
  ];
  if (options.points !== false) {
    layers.push({
      data: { values: plotted(rows) },
      mark: { type: 'point', filled: true, opacity: 1 },
      encoding: {
        x: xEncoding,
        y: yEncoding,
        ...(color && { color }),
        ...(reference && { shape: sourceShape(modelLabel) }),
      },
    });
  }
  if (reference !== undefined) {
    layers.push({
      data: { values: plotted(referenceRows) },
      mark: { type: 'point', filled: false, size: 120, strokeWidth: 2, opacity: 1 },
      encoding: {
        x: xEncoding,
        y: yEncoding,
        shape: sourceShape(reference.label),
        ...(color && {
          color: {
            // Colour a published point by its series when it names one, else a neutral grey.
            condition: { test: `isValid(${datumRef(series ?? '')})`, ...color },
            value: REFERENCE_NEUTRAL_COLOR,
          },
        }),
        ...(!color && { color: { value: REFERENCE_NEUTRAL_COLOR } }),
      },
    });
  }
  return toSpec({
    $schema: VEGA_LITE_SCHEMA,
    ...frame(options),
    layer: layers,
  });
}

/**
 * A Vega-Lite spec for a bar chart: plain, grouped (`group`) or stacked (`group` + `stack`).
 * Throws `ConfigError` for a bad field name or value.
 */
export function barChartSpec<Row extends RowOf<Row>>(options: BarChartOptions<Row>): VegaLiteSpec {
  const { x, y, rows, group } = options;
  requireFieldName(x.field, 'barChart.x.field');
  requireFieldName(y.field, 'barChart.y.field');
  checkPresent(rows, x.field, 'barChart.x.field');
  checkPresent(rows, y.field, 'barChart.y.field');
  checkCategorical(rows, x.field, 'barChart.rows', false);
  checkQuantitative(rows, { field: y.field }, 'barChart.rows');
  if (group !== undefined) {
    requireFieldName(group, 'barChart.group');
    checkPresent(rows, group, 'barChart.group');
    checkCategorical(rows, group, 'barChart.rows', false);
  }
  if (options.stack === true && group === undefined) {
    throw new ConfigError('barChart.stack', 'stacking needs a `group` field naming the parts of each bar');
  }
  const stack = options.stack === true;
  const categories = distinctValues(rows, x.field);
  const helperFields = {
    order: unusedFieldName(rows, 'stackOrder'),
    description: unusedFieldName(rows, 'label'),
  };
  const groups = group === undefined ? [] : distinctValues(rows, group);

  const encoding: Record<string, object> = {
    x: {
      field: fieldRef(x.field),
      type: 'nominal',
      title: axisTitle(x),
      // An explicit order: the experiment's order, not vega's alphabetical one.
      sort: categories,
      axis: { labelAngle: 0 },
    },
    y: {
      field: fieldRef(y.field),
      type: 'quantitative',
      title: axisTitle(y),
      ...(group !== undefined && !stack && { stack: null }),
    },
  };
  if (group !== undefined) {
    encoding['color'] = {
      field: fieldRef(group),
      type: 'nominal',
      title: options.groupTitle ?? group,
      scale: { domain: groups },
    };
    if (stack) {
      // vega-lite stacks by the group's *value* order, whatever the colour domain: an explicit order
      // field puts the parts bottom-to-top in the order they first appear in the data instead.
      encoding['order'] = { field: helperFields.order, type: 'quantitative' };
      // The order field would otherwise show up in each bar's accessible label; spell that label out.
      encoding['description'] = { field: helperFields.description, type: 'nominal' };
    } else {
      encoding['xOffset'] = { field: fieldRef(group), type: 'nominal', sort: groups };
    }
  }
  return toSpec({
    $schema: VEGA_LITE_SCHEMA,
    ...frame(options),
    data: { values: plotted(rows) },
    ...(group !== undefined &&
      stack && {
        transform: [
          { calculate: `indexof(${JSON.stringify(groups)}, ${datumRef(group)})`, as: helperFields.order },
          {
            calculate: [
              [axisTitle(x), x.field],
              [axisTitle(y), y.field],
              [options.groupTitle ?? group, group],
            ]
              .map(([title, field]) => `${JSON.stringify(`${title}: `)} + ${datumRef(field ?? '')}`)
              .join(' + "; " + '),
            as: helperFields.description,
          },
        ],
      }),
    mark: { type: 'bar' },
    encoding,
  });
}

/** Renders a line chart to SVG; see {@link lineChartSpec}. */
export function lineChart<Row extends RowOf<Row>>(
  options: LineChartOptions<Row>,
  renderOptions?: RenderSvgOptions,
): Promise<string> {
  return renderSvg(lineChartSpec(options), renderOptions);
}

/** Renders a bar chart to SVG; see {@link barChartSpec}. */
export function barChart<Row extends RowOf<Row>>(
  options: BarChartOptions<Row>,
  renderOptions?: RenderSvgOptions,
): Promise<string> {
  return renderSvg(barChartSpec(options), renderOptions);
}

/**
 * `Throughput (Gbps)`; the unit is put in the title so no chart ships with a unitless axis. A title
 * that already names its unit as a word (`NIC cores`, unit `cores`) is left as it is, not
 * `NIC cores (cores)`.
 */
export function axisTitle(axis: { readonly title: string; readonly unit?: string }): string {
  if (axis.unit === undefined || axis.unit === '') return axis.title;
  const unit = axis.unit.toLowerCase();
  const namesUnit = axis.title
    .toLowerCase()
    .split(/\s+/)
    .some((word) => word === unit);
  return namesUnit ? axis.title : `${axis.title} (${axis.unit})`;
}

/**
 * Vega-Lite reads `.` and `[ ]` in a field name as nested access (`latency.p99` → `latency` then
 * `p99`); experiment rows are flat, so those characters are escaped to mean themselves.
 */
export function fieldRef(field: string): string {
  return field.replace(/[.[\]\\]/g, (character) => `\\${character}`);
}

function quantitativeEncoding(axis: AxisOptions): object {
  const scale = axis.scale ?? 'linear';
  return {
    field: fieldRef(axis.field),
    type: 'quantitative',
    title: axisTitle(axis),
    scale: { type: scale, ...(axis.zero !== undefined && scale === 'linear' && { zero: axis.zero }) },
  };
}

function frame(options: { title: string; subtitle?: string; width?: number; height?: number }): object {
  const width = options.width ?? DEFAULT_WIDTH;
  const height = options.height ?? DEFAULT_HEIGHT;
  for (const [name, value] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isInteger(value) || value < 50 || value > 4000) {
      throw new ConfigError(`chart.${name}`, `must be a whole number of pixels in [50, 4000], got ${value}`);
    }
  }
  return {
    title:
      options.subtitle === undefined ? options.title : { text: options.title, subtitle: options.subtitle },
    width,
    height,
  };
}

/**
 * At least one row has `field` (when there are rows at all): a field no row has is a typo or a
 * renamed column, and would otherwise draw an empty chart without complaint.
 */
function checkPresent(rows: readonly object[], field: string, where: string): void {
  if (rows.length === 0 || rows.some((row) => Object.hasOwn(row, field))) return;
  const known = columnsOf(rows);
  throw new ConfigError(
    where,
    `no row has a field ${JSON.stringify(field)}; the rows have ${known.map((name) => JSON.stringify(name)).join(', ') || 'no fields'}`,
  );
}

/** Every value of `axis.field` is a finite number or missing; on a log axis, also > 0. */
function checkQuantitative(
  rows: readonly object[],
  axis: { readonly field: string; readonly scale?: ScaleKind },
  where: string,
): void {
  rows.forEach((row, index) => {
    const value = cellOf(row, axis.field);
    if (value === null || value === undefined) return;
    const path = `${where}[${index}].${axis.field}`;
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new ConfigError(
        path,
        `must be a finite number (or null for a missing point), got ${describe(value)}`,
      );
    }
    if (axis.scale === 'log' && value <= 0) {
      throw new ConfigError(
        path,
        `is ${value}, which a log axis cannot show: use a linear axis or drop the row`,
      );
    }
  });
}

/** Every value of `field` is a string, number or boolean; missing only where `allowMissing`. */
function checkCategorical(
  rows: readonly object[],
  field: string,
  where: string,
  allowMissing: boolean,
): void {
  rows.forEach((row, index) => {
    const value = cellOf(row, field);
    if (typeof value === 'string' || typeof value === 'boolean') return;
    if (typeof value === 'number' && Number.isFinite(value)) return;
    if ((value === null || value === undefined) && allowMissing) return;
    throw new ConfigError(
      `${where}[${index}].${field}`,
      `must be a string or finite number naming a category, got ${describe(value)}`,
    );
  });
}

/** `base`, or `base_2`, `base_3`, … — the first name no row uses, for a computed helper field. */
function unusedFieldName(rows: readonly object[], base: string): string {
  const taken = new Set<string>();
  for (const row of rows) for (const key of Object.keys(row)) taken.add(key);
  let name = base;
  for (let suffix = 2; taken.has(name); suffix++) name = `${base}_${suffix}`;
  return name;
}

/** A vega expression reading `field` from the current datum, whatever characters it holds. */
function datumRef(field: string): string {
  return `datum[${JSON.stringify(field)}]`;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n (convert bigints to numbers for charts)`;
  if (value === undefined) return 'nothing';
  return String(value);
}

/**
 * The one cast into vega-lite's types. Its `TopLevelSpec` is a deep union of generics (field
 * definitions × channels × mark kinds) that object literals built piecewise, as above, cannot be
 * inferred against; the builders' own option types are what callers see and what is checked, and
 * the rendered output is covered by tests.
 */
function toSpec(spec: object): VegaLiteSpec {
  return spec as VegaLiteSpec;
}

/** The smallest positive normal double; anything nearer zero draws as zero. */
const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * The rows vega draws: copies (vega tags the objects it is given, and a caller's rows must stay
 * the caller's), with subnormal numbers flushed to zero — no axis can show them apart from zero,
 * and a scale whose whole domain is subnormal makes vega's tick code fail.
 */
function plotted<R extends object>(rows: readonly R[]): R[] {
  return rows.map((row) => {
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(row)) {
      copy[key] = typeof value === 'number' && value !== 0 && Math.abs(value) < MIN_NORMAL ? 0 : value;
    }
    return copy as R;
  });
}
