/**
 * What the node's /metrics cost per request: recording one reply's latency for
 * `ipipe_request_latency_seconds` (src/platform/live/node/latency-summary.ts), against prom-client's
 * own Summary with the same one-minute window in five age buckets (what the node used before: it
 * pushes every value into each bucket's t-digest), and against a plain loop that only adds the
 * value to a per-actor total — all in one run. The live echo bench (`udp`) costs ~20–25 server
 * CPU µs a request, so this row says what share of it a node started with --metrics-port adds.
 * Also: one scrape (merging the window's histograms and formatting the text) for 16 actors.
 */

import { pathToFileURL } from 'node:url';
import client from 'prom-client';
import { type ActorId, actorId } from '../src/ids.ts';
import { ActorLatencySummary } from '../src/platform/live/node/latency-summary.ts';
import { type BenchRow, medianOf, printRows } from './report.ts';

const RECORDS = 400_000;
const ACTORS = 4;
/** Latencies from 50 µs to ~5 ms, spread as a request mix would be. */
const SECONDS = Float64Array.from({ length: 4096 }, (_, i) => 50e-6 * 1.0011 ** ((i * 2654435761) % 4096));
const IDS: ActorId[] = Array.from({ length: ACTORS }, (_, i) => actorId(i + 1));
const NAMES = IDS.map((id) => `actor-${id}`);

function nsPerRecord(record: (actor: number, seconds: number) => void): number {
  const start = performance.now();
  for (let i = 0; i < RECORDS; i++) record(i % ACTORS, SECONDS[i & 4095] as number);
  return ((performance.now() - start) * 1e6) / RECORDS;
}

export async function runMetricsBench(): Promise<BenchRow[]> {
  const totals = new Float64Array(ACTORS);
  const plain = (actor: number, seconds: number) => {
    totals[actor] = (totals[actor] as number) + seconds;
  };
  const promRegistry = new client.Registry();
  const promSummary = new client.Summary({
    name: 'prom_client_summary_seconds',
    help: 'the Summary the node used before',
    labelNames: ['actor'],
    percentiles: [0.5, 0.9, 0.99, 0.999],
    maxAgeSeconds: 60,
    ageBuckets: 5,
    registers: [promRegistry],
  });
  const prom = (actor: number, seconds: number) =>
    promSummary.observe({ actor: NAMES[actor] as string }, seconds);
  const registry = new client.Registry();
  const summary = new ActorLatencySummary(registry, (id) => `actor-${id}`);
  const ours = (actor: number, seconds: number) => summary.record(IDS[actor] as ActorId, seconds);

  for (const run of [plain, prom, ours]) nsPerRecord(run); // warm-up
  const plainNs = medianOf(5, () => nsPerRecord(plain));
  const promNs = medianOf(5, () => nsPerRecord(prom));
  const oursNs = medianOf(5, () => nsPerRecord(ours));

  const wide = new client.Registry();
  const wideSummary = new ActorLatencySummary(wide, (id) => `actor-${id}`);
  for (let i = 0; i < 16 * 10_000; i++)
    wideSummary.record(actorId(1 + (i % 16)), SECONDS[i & 4095] as number);
  const scrapes: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await wide.metrics();
    scrapes.push(performance.now() - start);
  }
  const scrapeMs = scrapes.sort((a, b) => a - b)[2] as number;
  summary.close();
  wideSummary.close();
  if (totals[0] === -1) throw new Error('unreachable');
  return [
    { section: 'metrics', name: 'plain loop (add to a per-actor total)', value: plainNs, unit: 'ns/request' },
    {
      section: 'metrics',
      name: "prom-client Summary (60 s window, 5 age buckets): the node's old recorder",
      value: promNs,
      unit: 'ns/request',
      ratio: promNs / plainNs,
      baseline: 'plain loop',
    },
    {
      section: 'metrics',
      name: 'ActorLatencySummary.record (HdrHistogram, newest age bucket only)',
      value: oursNs,
      unit: 'ns/request',
      ratio: oursNs / promNs,
      baseline: 'prom-client Summary',
    },
    {
      section: 'metrics',
      name: 'scrape of 16 actors (merge the window + text)',
      value: scrapeMs,
      unit: 'ms',
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printRows(await runMetricsBench());
}
