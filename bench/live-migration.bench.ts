/**
 * Live migration benchmark (issue 4 §5): the time of each of the paper's four phases when an
 * actor holding 1, 8 and 32 MiB of DMOs moves between the NIC and host domains of a live node,
 * both ways, against a plain copy of the same bytes between two SharedArrayBuffers measured in the
 * same run (the floor for phase 3, Gone, which moves the state).
 *
 *   one process  LiveNode.start: the ring carries a descriptor, the receiver copies the region
 *                image out of the sender's memory ("DMA", see channel-link.ts).
 *   TCP          startNicDomain + startHostDomain over a loopback TCP channel (the split node of a
 *                DPU): the image travels as checksummed chunks.
 *
 * Phases as LiveMigrationRecord reports them: prepare (stop dispatching; synchronous), ready
 * (in-flight work done; for host → NIC this includes the host draining what it queued), gone
 * (image out, adopted on the other side, old copy released), clean (buffered requests handed
 * over). After the rounds the actor reads every object back: all must hold their bytes.
 *
 * Run: `npx tsx bench/live-migration.bench.ts` (`--json` for one document).
 */

import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { actorId } from '../src/ids.ts';
import { connectTcpChannel, listenTcpChannel } from '../src/platform/live/channel/tcp-channel.ts';
import { IpipeClient } from '../src/platform/live/net/client.ts';
import {
  type LiveMigrationRecord,
  LiveNode,
  type LiveNodeOptions,
  startHostDomain,
  startNicDomain,
} from '../src/platform/live/node/live-node.ts';
import type { Domain } from '../src/sched/types.ts';
import { ballast } from './fixtures/ballast.ts';

const MODULE = fileURLToPath(new URL('./fixtures/ballast.ts', import.meta.url));
const SIZES_MIB = [1, 8, 32] as const;
const ROUNDS = 5;

type Variant = 'one process' | 'TCP';

interface Row {
  readonly variant: Variant;
  readonly mib: number;
  readonly direction: 'nic→host' | 'host→nic';
  readonly imageMiB: number;
  /** Medians over the rounds, ms. */
  readonly prepareMs: number;
  readonly readyMs: number;
  readonly goneMs: number;
  readonly cleanMs: number;
  readonly goneMinMs: number;
  /** Median plain copy of the image's bytes between two SharedArrayBuffers, ms (same run). */
  readonly memcpyMs: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function memcpyMs(bytes: number): number {
  const from = new Uint8Array(new SharedArrayBuffer(bytes)).fill(7);
  const to = new Uint8Array(new SharedArrayBuffer(bytes));
  to.set(from); // fault the pages in first: the node's regions are warm after the first move
  const times: number[] = [];
  for (let i = 0; i < 7; i++) {
    const started = performance.now();
    to.set(from);
    times.push(performance.now() - started);
  }
  return median(times);
}

interface Node {
  readonly port: number;
  migrate(to: Domain): Promise<LiveMigrationRecord>;
  stop(): Promise<void>;
}

async function startNode(variant: Variant, options: LiveNodeOptions): Promise<Node> {
  if (variant === 'one process') {
    const node = await LiveNode.start(options);
    return {
      port: node.address.port,
      migrate: (to) => node.migrate(actorId(1), to),
      stop: () => node.stop(),
    };
  }
  const listener = await listenTcpChannel({ port: 0 });
  const [nicChannel, hostChannel] = await Promise.all([
    listener.accept(),
    connectTcpChannel({ port: listener.port }),
  ]);
  const host = await startHostDomain(options, hostChannel);
  const nic = await startNicDomain(options, nicChannel);
  return {
    port: nic.address.port,
    migrate: (to) => nic.migrate(actorId(1), to),
    stop: async () => {
      await nic.stop();
      await host.stop();
      await Promise.all([nicChannel.close(), hostChannel.close()]);
      await listener.close();
    },
  };
}

async function measure(variant: Variant, mib: number, log: (line: string) => void): Promise<Row[]> {
  const regionBytes = Math.ceil(mib * 1.3 + 4) * 1024 * 1024;
  const node = await startNode(variant, {
    catalog: [{ id: actorId(1), name: 'ballast', module: MODULE, exportName: 'ballast' }],
    nicCores: 1,
    hostCores: 1,
    regionBytes,
    maxActors: 2,
    watchdogMs: 10_000,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.port, timeoutMs: 20_000 });
  const replies = ballast.replies;
  if (!replies) throw new Error('ballast has no reply codec');
  try {
    const filled: { count: number } = await client.call(1, ballast.messages, replies, { type: 'fill', mib });
    const records: LiveMigrationRecord[] = [];
    // One unmeasured round trip first: it faults in the pages of both regions.
    await node.migrate('host');
    await node.migrate('nic');
    for (let round = 0; round < ROUNDS; round++) {
      records.push(await node.migrate('host'));
      records.push(await node.migrate('nic'));
    }
    const check: { count: number; intact: number } = await client.call(1, ballast.messages, replies, {
      type: 'check',
    });
    if (check.count !== filled.count || check.intact !== check.count) {
      throw new Error(`state damaged by migration: ${check.intact}/${check.count} objects intact`);
    }
    const rows: Row[] = [];
    for (const direction of ['nic→host', 'host→nic'] as const) {
      const mine = records.filter((r) => `${r.from}→${r.to}` === direction);
      const imageBytes = median(mine.map((r) => r.stateBytes));
      const row: Row = {
        variant,
        mib,
        direction,
        imageMiB: imageBytes / (1024 * 1024),
        prepareMs: median(mine.map((r) => r.phasesMs.prepare)),
        readyMs: median(mine.map((r) => r.phasesMs.ready)),
        goneMs: median(mine.map((r) => r.phasesMs.gone)),
        cleanMs: median(mine.map((r) => r.phasesMs.clean)),
        goneMinMs: Math.min(...mine.map((r) => r.phasesMs.gone)),
        memcpyMs: memcpyMs(imageBytes),
      };
      log(
        `${variant} ${mib} MiB ${direction}: gone ${row.goneMs.toFixed(2)} ms (min ${row.goneMinMs.toFixed(2)}), memcpy ${row.memcpyMs.toFixed(2)} ms`,
      );
      rows.push(row);
    }
    return rows;
  } finally {
    await client.close();
    await node.stop();
  }
}

export async function runLiveMigrationBench(log: (line: string) => void = () => {}): Promise<Row[]> {
  const rows: Row[] = [];
  for (const variant of ['one process', 'TCP'] as const)
    for (const mib of SIZES_MIB) rows.push(...(await measure(variant, mib, log)));
  return rows;
}

function formatTable(rows: readonly Row[]): string {
  const header =
    '| path | DMOs | direction | image MiB | prepare ms | ready ms | gone ms (min) | clean ms | memcpy ms | gone ÷ memcpy |';
  const lines = rows.map(
    (r) =>
      `| ${r.variant} | ${r.mib} MiB | ${r.direction} | ${r.imageMiB.toFixed(2)} | ${r.prepareMs.toFixed(3)} | ` +
      `${r.readyMs.toFixed(2)} | ${r.goneMs.toFixed(2)} (${r.goneMinMs.toFixed(2)}) | ${r.cleanMs.toFixed(3)} | ` +
      `${r.memcpyMs.toFixed(2)} | ${(r.goneMs / r.memcpyMs).toFixed(2)}× |`,
  );
  return [
    `live migration, ${ROUNDS} rounds each way after one warm-up round, medians; node ${process.version}, ` +
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
    '',
    header,
    `|${'---|'.repeat(10)}`,
    ...lines,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await runLiveMigrationBench((line) => process.stderr.write(`${line}\n`));
  if (process.argv.includes('--json'))
    process.stdout.write(`${JSON.stringify({ schemaVersion: 1, rows }, null, 2)}\n`);
  else process.stdout.write(`${formatTable(rows)}\n`);
}
