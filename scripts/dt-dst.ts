/**
 * Many-seed deterministic simulation of DT (iPipe §5 "DT": OCC + 2PC with a coordinator log), the
 * CI's `npm run dst:dt`: every seed runs the protocol under drops, duplicates, reorders and
 * coordinator, server and participant crashes, and checks serializability, the bank invariant and
 * the durability of acknowledged commits at every quiescent point (src/apps/dt/dst/simulation.ts).
 *
 *   npx tsx scripts/dt-dst.ts --seeds 500              seeds 1..500, bank workload
 *   npx tsx scripts/dt-dst.ts --from 1000 --seeds 200 --workload fasst --zipf 0.99
 *   npx tsx scripts/dt-dst.ts --seed 42 --trace        one seed, every message and fault on stderr
 *
 * stdout: one line per failing seed with the command that reproduces it, then a summary (or one
 * JSON document with --json). Exit codes: 0 every seed passed, 1 a seed failed, 2 bad arguments.
 */

import { parseArgs } from 'node:util';
import {
  type DtSimulationOptions,
  type DtSimulationResult,
  reproduceCommand,
  runDtSimulation,
} from '../src/apps/dt/dst/simulation.ts';
import { commandLineHelpers } from './dst-cli.ts';

const USAGE =
  'usage: dt-dst.ts [--seed N | --from N --seeds COUNT] [--workload bank|fasst] [--zipf EXPONENT] ' +
  '[--stores memory|dmo] [--shards N] [--clients N] [--keys N] [--phases N] [--log-limit N] ' +
  '[--crashes MAX_PER_PHASE] [--drop P] [--duplicate P] [--trace] [--json]';

const cli = commandLineHelpers('dt-dst', USAGE);
// Annotated so control flow knows a call to it does not return.
const fail: (message: string) => never = cli.fail;
const integer = cli.integer;

function parse() {
  return parseArgs({
    options: {
      seed: { type: 'string' },
      from: { type: 'string' },
      seeds: { type: 'string' },
      workload: { type: 'string' },
      zipf: { type: 'string' },
      stores: { type: 'string' },
      shards: { type: 'string' },
      clients: { type: 'string' },
      keys: { type: 'string' },
      phases: { type: 'string' },
      'log-limit': { type: 'string' },
      crashes: { type: 'string' },
      drop: { type: 'string' },
      duplicate: { type: 'string' },
      trace: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
}
const { values } = cli.parse(parse);

const workload = values.workload ?? 'bank';
if (workload !== 'bank' && workload !== 'fasst') fail(`--workload must be bank or fasst, got ${workload}`);
const stores = values.stores ?? 'memory';
if (stores !== 'memory' && stores !== 'dmo') fail(`--stores must be memory or dmo, got ${stores}`);
const zipf = values.zipf === undefined ? undefined : Number(values.zipf);
if (zipf !== undefined && !(Number.isFinite(zipf) && zipf > 0))
  fail(`--zipf must be a number > 0, got ${values.zipf}`);

const { from, count } = cli.seedRange(values);
const shards = integer(values.shards, 'shards', 1);
const clients = integer(values.clients, 'clients', 1);
const keys = integer(values.keys, 'keys', 3);
const phases = integer(values.phases, 'phases', 1);
const logLimit = integer(values['log-limit'], 'log-limit', 1);
const crashes = integer(values.crashes, 'crashes', 0);
function probability(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!(parsed >= 0 && parsed < 1)) fail(`--${name} must be a probability in [0, 1), got ${value}`);
  return parsed;
}
const drop = probability(values.drop, 'drop');
const duplicate = probability(values.duplicate, 'duplicate');
const faults = {
  ...(crashes === undefined ? {} : { maxCrashesPerPhase: crashes }),
  ...(drop === undefined ? {} : { dropProbability: drop }),
  ...(duplicate === undefined ? {} : { duplicateProbability: duplicate }),
};

const base: Omit<DtSimulationOptions, 'seed'> = {
  workload,
  stores,
  ...(zipf === undefined ? {} : { distribution: { kind: 'zipf', exponent: zipf } }),
  ...(shards === undefined ? {} : { shards }),
  ...(clients === undefined ? {} : { clients }),
  ...(keys === undefined ? {} : { keys }),
  ...(phases === undefined ? {} : { phases }),
  ...(logLimit === undefined ? {} : { logLimitRecords: logLimit }),
  ...(Object.keys(faults).length === 0 ? {} : { faults }),
  ...(values.trace ? { trace: (line: string) => process.stderr.write(`${line}\n`) } : {}),
};

const startedAt = performance.now();
const failures: { seed: number; violations: readonly string[]; reproduce: string }[] = [];
const totals = {
  committed: 0,
  clientAborted: 0,
  crashes: 0,
  checkpoints: 0,
  tornTails: 0,
  quiescentPoints: 0,
};
for (let seed = from; seed < from + count; seed++) {
  const options: DtSimulationOptions = { ...base, seed };
  const result: DtSimulationResult = runDtSimulation(options);
  const { stats } = result;
  totals.committed += stats.committed;
  totals.clientAborted += stats.clientAborted;
  totals.crashes += stats.coordinatorCrashes + stats.serverCrashes + stats.participantCrashes;
  totals.checkpoints += stats.checkpoints;
  totals.tornTails += stats.tornTails;
  totals.quiescentPoints += stats.quiescentPoints;
  if (!result.ok) {
    const reproduce = reproduceCommand({ ...base, seed, trace: () => {} });
    failures.push({ seed, violations: result.violations, reproduce });
    if (!values.json) {
      process.stdout.write(
        `FAIL seed ${seed}: ${result.violations.join(' | ')}\n  reproduce: ${reproduce}\n`,
      );
    }
  }
  if (process.stderr.isTTY && !values.trace) process.stderr.write(`\rseed ${seed - from + 1}/${count}`);
}
if (process.stderr.isTTY && !values.trace) process.stderr.write('\n');
const elapsedMs = Math.round(performance.now() - startedAt);

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({
      schemaVersion: 1,
      workload,
      stores,
      firstSeed: from,
      seeds: count,
      failed: failures.length,
      failures,
      totals,
      elapsedMs,
    })}\n`,
  );
} else {
  process.stdout.write(
    `${count - failures.length}/${count} seed(s) passed (seeds ${from}..${from + count - 1}, ${workload}, ` +
      `${stores} stores) in ${elapsedMs} ms: ${totals.committed} commits, ${totals.clientAborted} aborts, ` +
      `${totals.crashes} crashes, ${totals.checkpoints} checkpoints, ${totals.tornTails} torn log tails, ` +
      `${totals.quiescentPoints} quiescent points checked\n`,
  );
}
process.exit(failures.length > 0 ? 1 : 0);
