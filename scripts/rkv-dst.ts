/**
 * Many-seed deterministic simulation of RKV's Multi-Paxos (paper, "The applications": RKV's
 * consensus), the nightly-style `npm run dst:rkv`: every seed runs 3 or 5 replicas and KV clients
 * on the simulated platform's EventKernel under drops, duplicates, reordering, partitions and
 * crash/restart (also inside a storage sync), then checks agreement, in-order apply, durable
 * promises, convergence, linearizability of the client history and that no acknowledged write is
 * lost (test/apps/rkv/paxos/harness/sim-cluster.ts). CI runs 200 seeds (test/apps/rkv/paxos/).
 *
 *   npx tsx scripts/rkv-dst.ts --seeds 5000               seeds 1..5000
 *   npx tsx scripts/rkv-dst.ts --from 9000 --seeds 1000 --replicas 5
 *   npx tsx scripts/rkv-dst.ts --seed 1234 --trace        one seed, faults and roles on stderr
 *   npx tsx scripts/rkv-dst.ts --seeds 200 --bug skipPersistence --keep-going   a broken replica
 *
 * stdout: one line per failing seed with the command that reproduces it, then a summary (or one
 * JSON document with --json). Exit codes: 0 every seed passed, 1 a seed failed, 2 bad arguments.
 */

import { parseArgs } from 'node:util';
import type { PaxosTestingBugs } from '../src/apps/rkv/paxos/index.ts';
import {
  addDstStats,
  type DstOptions,
  type DstResult,
  emptyDstTotals,
  reproduceCommand,
  runDst,
} from '../test/apps/rkv/paxos/harness/sim-cluster.ts';
import { commandLineHelpers } from './dst-cli.ts';

const BUGS = ['commitWithoutMajority', 'skipPersistence', 'ignorePromisedValues'] as const;
type BugName = (typeof BUGS)[number];

const USAGE =
  'usage: rkv-dst.ts [--seed N | --from N --seeds COUNT] [--replicas 3|5] ' +
  `[--bug ${BUGS.join('|')}]... [--clients-only] [--keep-going] [--trace] [--json]`;

const cli = commandLineHelpers('rkv-dst', USAGE);
// Annotated so control flow knows a call to it does not return.
const fail: (message: string) => never = cli.fail;
const integer = cli.integer;

function parse() {
  return parseArgs({
    options: {
      seed: { type: 'string' },
      from: { type: 'string' },
      seeds: { type: 'string' },
      replicas: { type: 'string' },
      bug: { type: 'string', multiple: true },
      'clients-only': { type: 'boolean', default: false },
      'keep-going': { type: 'boolean', default: false },
      trace: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
}
const { values } = cli.parse(parse);

const replicas = integer(values.replicas, 'replicas', 1);
if (replicas !== undefined && replicas !== 3 && replicas !== 5)
  fail(`--replicas must be 3 or 5, got ${replicas}`);
const bugs: { -readonly [K in BugName]?: boolean } = {};
for (const bug of values.bug ?? []) {
  if (!(BUGS as readonly string[]).includes(bug)) fail(`--bug must be one of ${BUGS.join(', ')}, got ${bug}`);
  bugs[bug as BugName] = true;
}
const { single, from, count } = cli.seedRange(values);

const base: Omit<DstOptions, 'seed'> = {
  ...(replicas === undefined ? {} : { replicas }),
  ...(Object.keys(bugs).length === 0 ? {} : { bugs: bugs satisfies PaxosTestingBugs }),
  ...(values['clients-only'] ? { invariants: false } : {}),
  ...(values.trace ? { trace: (line: string) => process.stderr.write(`${line}\n`) } : {}),
};

const startedAt = performance.now();
const failures: { seed: number; check: string; failure: string; reproduce: string }[] = [];
const totals = { seeds: 0, events: 0, ...emptyDstTotals() };
let slowestSeedMs = 0;
for (let seed = from; seed < from + count; seed++) {
  const seedStartedAt = performance.now();
  const result: DstResult = runDst({ ...base, seed });
  slowestSeedMs = Math.max(slowestSeedMs, performance.now() - seedStartedAt);
  const { stats } = result;
  totals.seeds++;
  totals.events += stats.events;
  addDstStats(totals, stats);
  if (single !== undefined && !values.json) process.stdout.write(`${JSON.stringify(stats)}\n`);
  if (!result.ok) {
    const { trace: _trace, ...replayable } = base;
    const reproduce = reproduceCommand({ ...replayable, seed });
    failures.push({ seed, check: result.check, failure: result.failure, reproduce });
    if (!values.json) {
      process.stdout.write(
        `FAIL seed ${seed} [${result.check}]: ${result.failure}\n  reproduce: ${reproduce}\n`,
      );
    }
    if (!values['keep-going']) break;
  }
  if (process.stderr.isTTY && !values.trace) process.stderr.write(`\rseed ${seed - from + 1}/${count}`);
}
if (process.stderr.isTTY && !values.trace) process.stderr.write('\n');
const elapsedMs = Math.round(performance.now() - startedAt);

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({
      schemaVersion: 1,
      firstSeed: from,
      seedsRequested: count,
      seedsRun: totals.seeds,
      failed: failures.length,
      failures,
      totals,
      elapsedMs,
      meanSeedMs: Math.round((elapsedMs / Math.max(1, totals.seeds)) * 10) / 10,
      slowestSeedMs: Math.round(slowestSeedMs),
    })}\n`,
  );
} else {
  process.stdout.write(
    `${totals.seeds - failures.length}/${totals.seeds} seed(s) passed (seeds ${from}..${from + totals.seeds - 1}) ` +
      `in ${elapsedMs} ms (${(elapsedMs / Math.max(1, totals.seeds)).toFixed(1)} ms/seed, slowest ` +
      `${Math.round(slowestSeedMs)} ms): ${totals.opsAcknowledged} acknowledged ops, ${totals.crashes} crashes ` +
      `(${totals.crashesInsideSync} inside a sync), ${totals.partitions} partitions, ${totals.leaderChanges} ` +
      `leader changes, ${totals.snapshotsInstalled} snapshot installs, ${totals.messagesDropped} drops, ` +
      `${totals.messagesDuplicated} duplicates, ${totals.messagesReordered} reordered deliveries\n`,
  );
}
process.exit(failures.length > 0 ? 1 : 0);
