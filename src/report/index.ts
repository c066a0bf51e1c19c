/**
 * ipipe's report writers: experiment data → files people read. Charts render to SVG in Node
 * (vega + vega-lite, no browser), rows to RFC 4180 CSV, results to JSON, and all of it into one
 * self-contained HTML page. Values and types are exported separately, each named explicitly.
 */

/** Options of the chart builders. */
export type {
  AxisOptions,
  BarChartOptions,
  BarValueAxisOptions,
  CategoryAxisOptions,
  LineChartOptions,
  ReferenceOverlay,
  ScaleKind,
} from './charts.ts';
/** Line and bar chart builders (`…Spec` returns the Vega-Lite spec; the plain name renders SVG). */
export { axisTitle, barChart, barChartSpec, fieldRef, lineChart, lineChartSpec } from './charts.ts';
/** RFC 4180 CSV writer and its field quoting. */
export { csvField, toCsv } from './csv.ts';
/** Options of the HTML report. */
export type { HtmlReportOptions, HtmlSection, HtmlTable } from './html.ts';
/** The HTML report, its escaping and its table renderer. */
export { escapeHtml, htmlReport, tableHtml } from './html.ts';
/** What `writeExperimentOutputs` takes and returns. */
export type { ExperimentOutputPaths, ExperimentOutputs } from './output-dir.ts';
/** Writes `<name>.json`, `<name>.csv` and `<name>-<chart>.svg` safely into a directory. */
export { safeFileStem, writeExperimentOutputs } from './output-dir.ts';
/** Options of `renderSvg`, and the spec type it takes. */
export type { RenderSvgOptions, VegaLiteSpec } from './render-svg.ts';
/** Renders any Vega-Lite spec to deterministic SVG, with the house style and no I/O. */
export { normaliseSvgIds, REPORT_CHART_CONFIG, renderSvg } from './render-svg.ts';
/** Row and cell types shared by charts, CSV and tables. */
export type { Cell, CsvCell, DataRow, FieldOf, RowOf } from './rows.ts';
/** The shared column-order rule for rows. */
export { columnsOf } from './rows.ts';
