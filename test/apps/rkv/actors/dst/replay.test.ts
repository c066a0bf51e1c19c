/**
 * Replays one DST run of the consensus actor, as a failing seed's reproduce command asks:
 *   RKV_ACTOR_DST_SEED=<n> [RKV_ACTOR_DST_REPLICAS=3|5] [RKV_ACTOR_DST_MIGRATE=1] [RKV_ACTOR_DST_MIGRATE_ORDER=1]
 *   [RKV_ACTOR_DST_UNSAFE=<mask>] [RKV_ACTOR_DST_MAX_LOG=<n>] [RKV_ACTOR_DST_CRASHES=0]
 *   [RKV_ACTOR_DST_LAGGARDS=1] [RKV_ACTOR_DST_PRE_VOTE=1] [RKV_ACTOR_DST_CONDITIONALS=1] [RKV_ACTOR_DST_SCANS=1]
 *   [RKV_ACTOR_DST_TRACE=1]
 *   npx tsx --test test/apps/rkv/actors/dst/replay.test.ts
 * Without RKV_ACTOR_DST_SEED it replays seed 1 (so the file is a quick smoke test in CI).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ActorDstOptions, runActorDst } from './harness.ts';

const env = process.env;
const number = (name: string): number | undefined => {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative integer, got ${raw}`);
  return value;
};

test('replay one consensus-actor DST seed', (t) => {
  const seed = number('RKV_ACTOR_DST_SEED') ?? 1;
  const replicas = number('RKV_ACTOR_DST_REPLICAS');
  const unsafe = number('RKV_ACTOR_DST_UNSAFE');
  const maxLogEntries = number('RKV_ACTOR_DST_MAX_LOG');
  const options: ActorDstOptions = {
    seed,
    ...(replicas === undefined ? {} : { replicas }),
    ...(unsafe === undefined ? {} : { unsafe }),
    ...(maxLogEntries === undefined ? {} : { maxLogEntries }),
    migrate: env['RKV_ACTOR_DST_MIGRATE'] === '1',
    ...(env['RKV_ACTOR_DST_MIGRATE_ORDER'] === '1' ? { migrateOrder: true } : {}),
    ...(env['RKV_ACTOR_DST_CRASHES'] === '0' ? { crashes: false } : {}),
    ...(env['RKV_ACTOR_DST_LAGGARDS'] === '1' ? { laggards: true } : {}),
    ...(env['RKV_ACTOR_DST_PRE_VOTE'] === '1' ? { preVote: true } : {}),
    ...(env['RKV_ACTOR_DST_CONDITIONALS'] === '1' ? { conditionals: true } : {}),
    ...(env['RKV_ACTOR_DST_SCANS'] === '1' ? { scans: true } : {}),
    ...(env['RKV_ACTOR_DST_TRACE'] === '1' ? { trace: (line: string) => console.log(line) } : {}),
  };
  const result = runActorDst(options);
  t.diagnostic(JSON.stringify(result.stats));
  assert.ok(result.ok, result.ok ? '' : `seed ${seed} [${result.check}]: ${result.failure}`);
});
