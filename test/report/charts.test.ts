/**
 * Line and bar charts render to SVG in Node: a well-formed-looking document with the title, axis
 * titles (units included) and a legend; one line per series, one bar per row; categories in data
 * order; stacked parts bottom-to-top in data order; a reference overlay as extra markers; bad data
 * refused with a ConfigError naming the row; and the same data always gives byte-identical SVG.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isIpipeError } from '../../src/errors.ts';
import { axisTitle, barChart, barChartSpec, lineChart, lineChartSpec } from '../../src/report/index.ts';

interface ThroughputRow {
  readonly cores: number;
  readonly gbps: number | null;
  readonly packetSize: string;
}

function throughputRows(sizes: readonly string[], maxCores: number): ThroughputRow[] {
  const rows: ThroughputRow[] = [];
  sizes.forEach((packetSize, index) => {
    for (let cores = 1; cores <= maxCores; cores++) {
      rows.push({ cores, gbps: Math.min(25, cores * (index + 1) * 1.5), packetSize });
    }
  });
  return rows;
}

const throughputOptions = (rows: readonly ThroughputRow[]) =>
  ({
    title: 'Echo throughput on LiquidIO CN2350',
    x: { field: 'cores', title: 'NIC cores', unit: 'cores' },
    y: { field: 'gbps', title: 'Throughput', unit: 'Gbps' },
    series: 'packetSize',
    seriesTitle: 'Packet size',
    rows,
  }) as const;

/** Counts occurrences of a literal substring. */
function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** The legend labels in drawing order. */
function legendLabels(svg: string): string[] {
  return [...svg.matchAll(/role-legend-label"[^>]*><text[^>]*>([^<]*)<\/text>/g)].map(
    (match) => match[1] ?? '',
  );
}

function expectConfigError(action: () => unknown, pathPattern: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(
      isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID'),
      `expected a ConfigError, got ${String(error)}`,
    );
    assert.match(error.message, pathPattern);
    return true;
  });
}

describe('lineChart', () => {
  it('draws one line per series with the title, axis titles with units, and a legend', async () => {
    const sizes = ['64B', '256B', '1KB'];
    const svg = await lineChart(throughputOptions(throughputRows(sizes, 6)));
    assert.match(svg, /^<svg[\s>]/);
    assert.match(svg, /<\/svg>$/);
    assert.ok(svg.includes('>Echo throughput on LiquidIO CN2350</text>'));
    assert.ok(svg.includes('>NIC cores</text>'), 'the unit is not repeated after a title that names it');
    assert.ok(svg.includes('>Throughput (Gbps)</text>'));
    assert.ok(svg.includes('>Packet size</text>'), 'legend title');
    assert.equal(count(svg, 'aria-roledescription="line mark"'), sizes.length);
    assert.equal(count(svg, 'aria-roledescription="point"'), sizes.length * 6);
    // Series in the order the experiment produced them, not alphabetical (1KB, 256B, 64B).
    assert.deepEqual(legendLabels(svg), sizes);
  });

  it('draws a single line without a legend when there is no series', async () => {
    const rows = [
      { load: 0.1, p99: 4 },
      { load: 0.5, p99: 9 },
      { load: 0.9, p99: 40 },
    ];
    const svg = await lineChart({
      title: 'p99 latency vs load',
      x: { field: 'load', title: 'Offered load', unit: 'Mpps' },
      y: { field: 'p99', title: 'p99 latency', unit: 'µs', scale: 'log' },
      rows,
      points: false,
    });
    assert.equal(count(svg, 'aria-roledescription="line mark"'), 1);
    assert.equal(count(svg, 'aria-roledescription="point"'), 0);
    assert.equal(count(svg, 'aria-roledescription="legend"'), 0);
    assert.ok(svg.includes('p99 latency (µs)'));
    assert.match(svg, /for a log scale/);
  });

  it('draws published reference points as distinct markers with their own legend entry', async () => {
    const rows = throughputRows(['64B', '1KB'], 4);
    const svg = await lineChart({
      ...throughputOptions(rows),
      reference: {
        label: 'iPipe paper, Fig. 3',
        rows: [
          { cores: 2, gbps: 3.5, packetSize: '64B' },
          { cores: 4, gbps: 11, packetSize: '1KB' },
          { cores: 3, gbps: 8 },
        ],
      },
    });
    assert.equal(count(svg, 'aria-roledescription="line mark"'), 2);
    assert.equal(count(svg, 'aria-roledescription="point"'), rows.length + 3);
    assert.deepEqual(legendLabels(svg), ['64B', '1KB', 'model', 'iPipe paper, Fig. 3']);
    // Reference markers are hollow (stroke only); the model's points are filled.
    const referenceMarks = [...svg.matchAll(/aria-roledescription="point"[^>]*stroke="[^"]+"[^>]*>/g)];
    assert.equal(referenceMarks.filter((mark) => !/ fill="/.test(mark[0])).length, 3);
    assert.ok(svg.includes('stroke="#333333"'), 'a point without a series is drawn in neutral grey');
  });

  it('refuses a reference labelled like the model', () => {
    expectConfigError(
      () =>
        lineChartSpec({
          ...throughputOptions(throughputRows(['64B'], 2)),
          reference: { label: 'model', rows: [] },
        }),
      /reference\.label/,
    );
  });

  it('refuses NaN, non-numbers and non-positive values on a log axis, naming the row', () => {
    const base = throughputOptions(throughputRows(['64B'], 3));
    expectConfigError(
      () => lineChartSpec({ ...base, rows: [{ cores: 1, gbps: Number.NaN, packetSize: '64B' }] }),
      /lineChart\.rows\[0\]\.gbps: must be a finite number/,
    );
    const text = [
      { cores: 1, gbps: 2, packetSize: '64B' },
      { cores: '2', gbps: 2, packetSize: '64B' },
    ];
    expectConfigError(
      () => lineChartSpec({ ...base, rows: text as unknown as ThroughputRow[] }),
      /rows\[1\]\.cores/,
    );
    expectConfigError(
      () =>
        lineChartSpec({
          ...base,
          y: { field: 'gbps', title: 'Throughput', unit: 'Gbps', scale: 'log' },
          rows: [{ cores: 1, gbps: 0, packetSize: '64B' }],
        }),
      /rows\[0\]\.gbps: is 0, which a log axis cannot show/,
    );
    expectConfigError(
      () =>
        lineChartSpec({
          ...base,
          reference: { label: 'paper', rows: [{ cores: 1, gbps: Number.POSITIVE_INFINITY }] },
        }),
      /reference\.rows\[0\]\.gbps/,
    );
    expectConfigError(() => lineChartSpec({ ...base, width: 10 }), /chart\.width/);
  });

  it('checks field names against the row type, and at run time against the rows', () => {
    const base = throughputOptions(throughputRows(['64B'], 2));
    const typo = { ...base, y: { field: 'gbs', title: 'Throughput', unit: 'Gbps' } };
    expectConfigError(
      // @ts-expect-error -- `gbs` is not a field of ThroughputRow: the compiler catches the typo first.
      () => lineChartSpec<ThroughputRow>(typo),
      /lineChart\.y\.field: no row has a field "gbs"; the rows have "cores", "gbps", "packetSize"/,
    );
    expectConfigError(
      () =>
        barChartSpec({
          title: 't',
          x: { field: 'a', title: 'A' },
          y: { field: 'b', title: 'B' },
          group: 'c' as 'a',
          rows: [{ a: 'x', b: 1 }],
        }),
      /barChart\.group: no row has a field "c"/,
    );
  });

  it('breaks the line at a missing (null) measurement instead of refusing it', async () => {
    const rows: ThroughputRow[] = [
      { cores: 1, gbps: 1, packetSize: '64B' },
      { cores: 2, gbps: null, packetSize: '64B' },
      { cores: 3, gbps: 3, packetSize: '64B' },
    ];
    const svg = await lineChart({ ...throughputOptions(rows), points: true });
    assert.equal(count(svg, 'aria-roledescription="point"'), 2);
  });

  it('plots field names with dots and brackets as flat keys', async () => {
    const rows = [
      { 'load.mpps': 1, 'latency[p99]': 5 },
      { 'load.mpps': 2, 'latency[p99]': 8 },
    ];
    const svg = await lineChart({
      title: 'Escaped fields',
      x: { field: 'load.mpps', title: 'Load', unit: 'Mpps' },
      y: { field: 'latency[p99]', title: 'p99', unit: 'µs' },
      rows,
    });
    assert.equal(count(svg, 'aria-roledescription="point"'), 2);
    assert.ok(!svg.includes('NaN'), 'every point has a position');
  });

  it('escapes markup in titles and labels inside the SVG', async () => {
    const svg = await lineChart({
      title: '<script>alert(1)</script>',
      x: { field: 'x', title: 'x <b>' },
      y: { field: 'y', title: 'y & "z"' },
      series: 's',
      rows: [
        { x: 1, y: 1, s: '<img src=x onerror=alert(1)>' },
        { x: 2, y: 2, s: '<img src=x onerror=alert(1)>' },
      ],
    });
    assert.ok(!svg.includes('<script'));
    assert.ok(!svg.includes('<img'));
    assert.ok(svg.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  });
});

describe('axisTitle', () => {
  it('appends the unit, unless the title already names it as a word', () => {
    assert.equal(axisTitle({ title: 'Throughput', unit: 'Gbps' }), 'Throughput (Gbps)');
    assert.equal(axisTitle({ title: 'NIC cores', unit: 'cores' }), 'NIC cores');
    assert.equal(axisTitle({ title: 'Host cores busy', unit: 'cores' }), 'Host cores busy');
    assert.equal(axisTitle({ title: 'Cores used', unit: 'core' }), 'Cores used (core)');
    assert.equal(axisTitle({ title: 'Load' }), 'Load');
  });
});

describe('barChart', () => {
  const deployments = ['host-only', 'offloaded'];
  const sizes = [64, 512, 1500];
  const coreRows = sizes.flatMap((size) =>
    deployments.map((deployment) => ({
      packetSizeBytes: size,
      deployment,
      hostCores: deployment === 'host-only' ? 8 - size / 400 : 2,
    })),
  );

  it('draws grouped bars, one per row, categories and groups in data order', async () => {
    const svg = await barChart({
      title: 'Host cores used, RKV',
      x: { field: 'packetSizeBytes', title: 'Packet size', unit: 'B' },
      y: { field: 'hostCores', title: 'Host cores used', unit: 'cores' },
      group: 'deployment',
      groupTitle: 'Deployment',
      rows: coreRows,
    });
    assert.match(svg, /^<svg[\s>]/);
    assert.ok(svg.includes('>Host cores used, RKV</text>'));
    assert.ok(svg.includes('>Packet size (B)</text>'));
    assert.ok(svg.includes('>Host cores used</text>'));
    assert.equal(count(svg, 'aria-roledescription="bar"'), coreRows.length);
    assert.deepEqual(legendLabels(svg), deployments);
    // Grouped: within a category the bars sit side by side (different x), both from the baseline.
    const bars = [...svg.matchAll(/aria-label="Packet size \(B\): 64;[^"]*" [^>]*d="M([\d.]+),/g)];
    assert.equal(bars.length, 2);
    assert.notEqual(bars[0]?.[1], bars[1]?.[1]);
    // Category axis labels in data order (64, 512, 1500), not alphabetical (1500, 512, 64).
    const axisLabels = [...svg.matchAll(/role-axis-label"[^>]*>((?:<text[^>]*>[^<]*<\/text>)+)/g)].map(
      (match) => [...(match[1] ?? '').matchAll(/>([^<]+)</g)].map((text) => text[1]),
    );
    assert.ok(
      axisLabels.some((labels) => labels.join(',') === '64,512,1500'),
      JSON.stringify(axisLabels),
    );
  });

  it('stacks parts bottom-to-top in the order they first appear, whatever their names', async () => {
    const phases = ['prepare', 'copy DMOs', 'forward', 'activate'];
    const rows = ['RKV', 'DT'].flatMap((application) =>
      phases.map((phase, index) => ({ application, phase, milliseconds: index + 1 })),
    );
    const svg = await barChart({
      title: 'Migration time by phase',
      x: { field: 'application', title: 'Application' },
      y: { field: 'milliseconds', title: 'Migration time', unit: 'ms' },
      group: 'phase',
      stack: true,
      rows,
    });
    assert.equal(count(svg, 'aria-roledescription="bar"'), rows.length);
    const tops = phases.map((phase) => {
      const match = svg.match(
        new RegExp(`aria-label="Application: RKV;[^"]*phase: ${phase}"[^>]*d="M[\\d.]+,([\\d.]+)`),
      );
      assert.ok(match, `bar for ${phase}`);
      return Number(match[1]);
    });
    // SVG y grows downwards: each later phase sits above (smaller y than) the one before it.
    for (let index = 1; index < tops.length; index++) assert.ok((tops[index] ?? 0) < (tops[index - 1] ?? 0));
    assert.ok(!svg.includes('stackOrder'), 'the helper field stays out of the accessible labels');
  });

  it('refuses stacking without groups and non-numeric bar lengths', () => {
    expectConfigError(
      () =>
        barChartSpec({
          title: 't',
          x: { field: 'a', title: 'A' },
          y: { field: 'b', title: 'B' },
          stack: true,
          rows: [{ a: 'x', b: 1 }],
        }),
      /barChart\.stack/,
    );
    expectConfigError(
      () =>
        barChartSpec({
          title: 't',
          x: { field: 'a', title: 'A' },
          y: { field: 'b', title: 'B' },
          rows: [{ a: 'x', b: '1' }],
        }),
      /barChart\.rows\[0\]\.b/,
    );
    expectConfigError(
      () =>
        barChartSpec({
          title: 't',
          x: { field: 'a', title: 'A' },
          y: { field: 'b', title: 'B' },
          rows: [{ a: null, b: 1 }],
        }),
      /barChart\.rows\[0\]\.a/,
    );
  });
});

describe('chart determinism', () => {
  it("draws values nearer zero than any normal double as zero, and leaves the caller's rows untouched", async () => {
    // The case a seeded property run found: a domain of ±5e-324 made vega's ticks fail.
    const rows = [
      { x: 0, y: 5e-324, s: 'a' },
      { x: 0, y: -5e-324, s: 'a' },
    ];
    const line = await lineChart({
      title: 'p',
      x: { field: 'x', title: 'X' },
      y: { field: 'y', title: 'Y' },
      series: 's',
      rows,
    });
    const bars = await barChart({
      title: 'p',
      x: { field: 'x', title: 'X' },
      y: { field: 'y', title: 'Y' },
      group: 's',
      rows,
    });
    assert.match(line, /^<svg/);
    assert.match(bars, /^<svg/);
    for (const row of rows)
      assert.deepEqual(Object.getOwnPropertySymbols(row), [], 'vega tagged a caller row');
    assert.equal(rows[0]?.y, 5e-324, 'the caller keeps its values');
  });

  it('renders the same data to byte-identical SVG', async () => {
    const rows = throughputRows(['64B', '1KB'], 5);
    const first = await lineChart(throughputOptions(rows));
    const second = await lineChart(throughputOptions(structuredClone(rows)));
    assert.equal(first, second);
    assert.ok(!/\d{4}-\d{2}-\d{2}T/.test(first), 'no timestamp');
  });

  it('renders any small data set identically twice (property)', async () => {
    const row = fc.record({
      x: fc.integer({ min: 0, max: 100 }),
      y: fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
      s: fc.constantFrom('a', 'b', 'c'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 12 }), fc.boolean(), async (rows, asBars) => {
        const render = () =>
          asBars
            ? barChart({
                title: 'p',
                x: { field: 'x', title: 'X' },
                y: { field: 'y', title: 'Y' },
                group: 's',
                rows,
              })
            : lineChart({
                title: 'p',
                x: { field: 'x', title: 'X' },
                y: { field: 'y', title: 'Y' },
                series: 's',
                rows,
              });
        const [first, second] = await Promise.all([render(), render()]);
        assert.equal(first, second);
        assert.match(first, /^<svg[\s>]/);
      }),
      { numRuns: 12 },
    );
  });
});
