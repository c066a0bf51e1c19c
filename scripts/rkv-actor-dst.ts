/**
 * Many-seed deterministic simulation of RKV's actors as deployed on the simulated platform
 * (test/apps/rkv/actors/dst/harness.ts: the four actors per replica, durable logs, drops,
 * duplicates, partitions, crashes and restarts; clients put, delete and get; the history must be
 * linearizable, no acknowledged write lost, every replica as the verifier read). CI runs 200 plain
 * seeds, 20 laggard seeds and a few of each other option (test/apps/rkv/actors/dst/); this runs
 * any range:
 *
 *   npx tsx scripts/rkv-actor-dst.ts --seeds 1000                  seeds 1..1000
 *   npx tsx scripts/rkv-actor-dst.ts --from 1 --seeds 250 --laggards  state transfers, mid-transfer crashes
 *   npx tsx scripts/rkv-actor-dst.ts --seeds 500 --conditionals     SET NX / XX among the puts
 *   npx tsx scripts/rkv-actor-dst.ts --seeds 500 --scans            SCAN pages among the reads
 *   npx tsx scripts/rkv-actor-dst.ts --seeds 300 --migrate          consensus / memtable moved NIC↔host
 *   npx tsx scripts/rkv-actor-dst.ts --seeds 400 --migrate-order    per-sender order: a memtable moved
 *        NIC↔host again and again beside its replica's consensus on the host, while applies flow
 *        (writes, a restarted replica's catch-up, the last writes); an apply run out of order
 *        fails replicas-differ or delete-answers (harness.ts `migrateOrder`)
 *   npx tsx scripts/rkv-actor-dst.ts --seed 1234                    one seed, its counters
 *
 * stdout: one line per failing seed with the command that replays it, then a summary (or one JSON
 * document with --json). Exit codes: 0 every seed passed, 1 a seed failed, 2 bad arguments.
 */

import { parseArgs } from 'node:util';
import {
  type ActorDstOptions,
  type ActorDstStats,
  emptyActorDstStats,
  reproduceActorDst,
  runActorDst,
} from '../test/apps/rkv/actors/dst/harness.ts';
import { commandLineHelpers } from './dst-cli.ts';

const USAGE =
  'usage: rkv-actor-dst.ts [--seed N | --from N --seeds COUNT] [--laggards] [--pre-vote] [--conditionals] [--scans] [--migrate] [--migrate-order] ' +
  '[--keep-going] [--json]';

const cli = commandLineHelpers('rkv-actor-dst', USAGE);

function parse() {
  return parseArgs({
    options: {
      seed: { type: 'string' },
      from: { type: 'string' },
      seeds: { type: 'string' },
      laggards: { type: 'boolean', default: false },
      'pre-vote': { type: 'boolean', default: false },
      conditionals: { type: 'boolean', default: false },
      scans: { type: 'boolean', default: false },
      migrate: { type: 'boolean', default: false },
      'migrate-order': { type: 'boolean', default: false },
      'keep-going': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
}
const { values } = cli.parse(parse);
const { single, from, count } = cli.seedRange(values);

const base: Omit<ActorDstOptions, 'seed'> = {
  ...(values.laggards ? { laggards: true } : {}),
  ...(values['pre-vote'] ? { preVote: true } : {}),
  ...(values.conditionals ? { conditionals: true } : {}),
  ...(values.scans ? { scans: true } : {}),
  ...(values.migrate ? { migrate: true } : {}),
  ...(values['migrate-order'] ? { migrateOrder: true } : {}),
};

type Totals = Omit<ActorDstStats, 'replicas'>;
const { replicas: _replicas, ...zero } = emptyActorDstStats(0);
const totals: Totals = zero;
const startedAt = performance.now();
const failures: { seed: number; check: string; failure: string; reproduce: string }[] = [];
let seedsRun = 0;
for (let seed = from; seed < from + count; seed++) {
  const result = runActorDst({ ...base, seed });
  seedsRun++;
  for (const key of Object.keys(totals) as (keyof Totals)[]) {
    totals[key] =
      key === 'maxLogRecords' ? Math.max(totals[key], result.stats[key]) : totals[key] + result.stats[key];
  }
  if (single !== undefined && !values.json) process.stdout.write(`${JSON.stringify(result.stats)}\n`);
  if (!result.ok) {
    const reproduce = reproduceActorDst({ ...base, seed });
    failures.push({ seed, check: result.check, failure: result.failure, reproduce });
    if (!values.json) {
      process.stdout.write(
        `FAIL seed ${seed} [${result.check}]: ${result.failure}\n  reproduce: ${reproduce}\n`,
      );
    }
    if (!values['keep-going']) break;
  }
  if (process.stderr.isTTY) process.stderr.write(`\rseed ${seed - from + 1}/${count}`);
}
if (process.stderr.isTTY) process.stderr.write('\n');
const elapsedMs = Math.round(performance.now() - startedAt);

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({
      schemaVersion: 1,
      firstSeed: from,
      seedsRequested: count,
      seedsRun,
      failed: failures.length,
      failures,
      totals,
      elapsedMs,
    })}\n`,
  );
} else {
  process.stdout.write(
    `${seedsRun - failures.length}/${seedsRun} seed(s) passed (seeds ${from}..${from + seedsRun - 1}) in ` +
      `${elapsedMs} ms: ${totals.opsAcknowledged} acknowledged ops, ${totals.deletes} deletes ` +
      `(${totals.deletesUnknown} answered DEL_UNKNOWN, ${totals.deletesUnknownUnexplained} without a restart or ` +
      `install of the answering replica), ${totals.crashes} crashes, ${totals.partitions} partitions, ` +
      `${totals.transfers} snapshot installs, ${totals.scans} scan pages (${totals.scanPairs} pairs, ${totals.scansCut} cut)\n`,
  );
}
process.exit(failures.length > 0 ? 1 : 0);
