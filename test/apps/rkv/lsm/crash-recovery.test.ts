/**
 * Crashes injected at every kind of point — mid-flush, mid-compaction, mid-manifest-commit, during
 * open and close — then recovery checked against the durability contract (lsm-engine.ts):
 *
 *   - the store reopens (a crash never leaves a store that refuses to open),
 *   - flushedSequence ≥ every flushedSequence the engine reported before the crash (no
 *     acknowledged write lost),
 *   - the contents are exactly the writes with sequence ≤ flushedSequence (no later write, no
 *     partial flush, nothing corrupt accepted),
 *   - re-applying the later writes restores the full model, and the store keeps working
 *     (more writes, full compaction) afterwards.
 *
 * Each scenario first runs without a fault to count its mutating filesystem calls N, then again
 * with the fault at call k ∈ [1, N]. Crash models: power loss on the in-memory disk (unsynced
 * bytes and directory changes partly lost, torn writes), process death on the in-memory disk and
 * on real files. Injected I/O errors (EIO) must fail the operation cleanly and lose nothing.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  FaultyFileSystem,
  isLsmError,
  LsmEngine,
  type LsmEngineOptions,
  type LsmFileSystem,
  MemoryFileSystem,
  NodeFileSystem,
  SimulatedCrash,
} from '../../../../src/apps/rkv/lsm/index.ts';
import {
  assertMatchesModel,
  fromHex,
  hex,
  type Model,
  SMALL_TREE,
  seededRandom,
  tempDirectory,
} from './helpers.ts';

type Op =
  | { op: 'put'; key: number; value: number }
  | { op: 'delete'; key: number }
  | { op: 'flush' }
  | { op: 'step'; budget: number }
  | { op: 'compactAll' }
  | { op: 'reopen' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record({ op: fc.constant('put' as const), key: fc.nat(120), value: fc.nat(1_000_000) }),
  },
  { weight: 12, arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.nat(120) }) },
  { weight: 2, arbitrary: fc.constant({ op: 'flush' as const }) },
  {
    weight: 8,
    arbitrary: fc.record({ op: fc.constant('step' as const), budget: fc.integer({ min: 128, max: 8192 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'compactAll' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'reopen' as const }) },
);

interface LoggedWrite {
  readonly sequence: number;
  readonly key: string;
  readonly value: string | undefined;
}

function key(n: number): Uint8Array {
  return new TextEncoder().encode(`key-${n % 5}-${n}`);
}

function value(n: number): Uint8Array {
  // Values of 8..~90 bytes, so memtables fill after a few dozen writes.
  return new TextEncoder().encode(`v${n}`.padEnd(8 + (n % 80), '.'));
}

function modelAt(log: readonly LoggedWrite[], sequence: number): Model {
  const model: Model = new Map();
  for (const write of log) {
    if (write.sequence > sequence) break;
    if (write.value === undefined) model.delete(write.key);
    else model.set(write.key, write.value);
  }
  return model;
}

interface Outcome {
  readonly log: LoggedWrite[];
  /** The largest flushedSequence the engine reported after a call that returned. */
  readonly acknowledged: number;
  /** The error that ended the run, if any. */
  readonly error: unknown;
}

/** Runs `ops` until the end or the first thrown error (the crash). */
function runScenario(ops: readonly Op[], open: () => LsmEngine): Outcome {
  const log: LoggedWrite[] = [];
  let acknowledged = 0;
  let engine: LsmEngine | undefined;
  try {
    engine = open();
    for (const step of ops) {
      switch (step.op) {
        case 'put': {
          const sequence = engine.put(key(step.key), value(step.value));
          log.push({ sequence, key: hex(key(step.key)), value: hex(value(step.value)) });
          break;
        }
        case 'delete': {
          const sequence = engine.delete(key(step.key));
          log.push({ sequence, key: hex(key(step.key)), value: undefined });
          break;
        }
        case 'flush':
          engine.flush();
          break;
        case 'step':
          engine.maintenanceStep(step.budget);
          break;
        case 'compactAll':
          engine.tree.compactAll();
          break;
        case 'reopen':
          engine.close();
          engine = undefined;
          engine = open();
          break;
      }
      acknowledged = Math.max(acknowledged, engine.flushedSequence);
    }
    engine.close();
    acknowledged = Math.max(acknowledged, log.at(-1)?.sequence ?? 0);
    return { log, acknowledged, error: undefined };
  } catch (error) {
    return { log, acknowledged, error };
  }
}

/** Reopens after a crash and checks the contract; then replays, keeps using the store, checks again. */
function checkRecovery(outcome: Outcome, open: () => LsmEngine, label: string): void {
  const engine = open();
  try {
    const recovered = engine.flushedSequence;
    const last = outcome.log.at(-1)?.sequence ?? 0;
    assert.ok(
      recovered >= outcome.acknowledged,
      `${label}: flushedSequence ${recovered} < acknowledged ${outcome.acknowledged}`,
    );
    assert.ok(recovered <= last, `${label}: flushedSequence ${recovered} beyond the last write ${last}`);
    assertMatchesModel(engine, modelAt(outcome.log, recovered), `${label}: recovered state`);
    for (const write of outcome.log) {
      if (write.sequence <= recovered) continue;
      if (write.value === undefined) engine.delete(fromHex(write.key), { sequence: write.sequence });
      else engine.put(fromHex(write.key), fromHex(write.value), { sequence: write.sequence });
    }
    const model = modelAt(outcome.log, Number.POSITIVE_INFINITY);
    for (let i = 0; i < 150; i++) {
      engine.put(key(i * 7), value(i));
      model.set(hex(key(i * 7)), hex(value(i)));
    }
    engine.flush();
    engine.tree.compactAll();
    assertMatchesModel(engine, model, `${label}: after replay and more writes`);
  } finally {
    engine.close({ flush: false });
  }
}

function engineOptions(fileSystem: LsmFileSystem, directory: string): LsmEngineOptions {
  return { directory, fileSystem, ...SMALL_TREE, maintenance: 'manual', memtableBytes: 1536 };
}

const scenarioArb = fc.record({
  ops: fc.array(opArb, { minLength: 40, maxLength: 220 }),
  faultAt: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  crashSeed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  inline: fc.boolean(),
});

for (const mode of ['power', 'process'] as const) {
  test(`crash (${mode} loss) at a random filesystem call, on the in-memory disk: recovery keeps the contract`, () => {
    fc.assert(
      fc.property(scenarioArb, ({ ops, faultAt, crashSeed, inline }) => {
        const open = (fs: MemoryFileSystem) => () =>
          LsmEngine.open({ ...engineOptions(fs, '/db'), maintenance: inline ? 'inline' : 'manual' });
        const dry = new MemoryFileSystem();
        const clean = runScenario(ops, open(dry));
        assert.equal(clean.error, undefined);
        const k = 1 + Math.floor(faultAt * dry.mutatingOperations);
        const fs = new MemoryFileSystem();
        fs.failAtOperation = k;
        const outcome = runScenario(ops, open(fs));
        assert.ok(
          outcome.error instanceof SimulatedCrash,
          `fault ${k}/${dry.mutatingOperations} did not fire`,
        );
        fs.crash(mode, seededRandom(crashSeed));
        checkRecovery(outcome, open(fs), `fault ${k}/${dry.mutatingOperations}`);
      }),
      { numRuns: mode === 'power' ? 150 : 60 },
    );
  });
}

test('crash at every filesystem call of one flush + compaction, power loss, three outcomes each', () => {
  // Exhaustive over one fixed scenario: every fault point, not just sampled ones.
  const ops: Op[] = [];
  for (let i = 0; i < 60; i++) ops.push({ op: 'put', key: i % 25, value: i });
  ops.push({ op: 'delete', key: 3 }, { op: 'flush' });
  for (let i = 0; i < 8; i++) ops.push({ op: 'step', budget: 4096 });
  ops.push({ op: 'compactAll' });
  const open = (fs: MemoryFileSystem) => () => LsmEngine.open(engineOptions(fs, '/db'));
  const dry = new MemoryFileSystem();
  assert.equal(runScenario(ops, open(dry)).error, undefined);
  for (let k = 1; k <= dry.mutatingOperations; k++) {
    for (const seed of [1, 2, 3]) {
      const fs = new MemoryFileSystem();
      fs.failAtOperation = k;
      const outcome = runScenario(ops, open(fs));
      assert.ok(outcome.error instanceof SimulatedCrash);
      fs.crash('power', seededRandom(seed * 7919 + k));
      checkRecovery(outcome, open(fs), `fault ${k}/${dry.mutatingOperations} seed ${seed}`);
    }
  }
});

test('crash (process death) on real files: recovery keeps the contract and cleans leftovers', () => {
  const directory = tempDirectory();
  try {
    let run = 0;
    fc.assert(
      fc.property(scenarioArb, ({ ops, faultAt }) => {
        const path = `${directory.path}/run-${run++}`;
        const open = (fs: LsmFileSystem, where: string) => () => LsmEngine.open(engineOptions(fs, where));
        const dry = new FaultyFileSystem(new NodeFileSystem());
        assert.equal(runScenario(ops, open(dry, `${path}-dry`)).error, undefined);
        const fs = new FaultyFileSystem(new NodeFileSystem());
        fs.failAtOperation = 1 + Math.floor(faultAt * dry.mutatingOperations);
        const outcome = runScenario(ops, open(fs, path));
        assert.ok(outcome.error instanceof SimulatedCrash);
        fs.revive();
        checkRecovery(outcome, open(fs, path), `fault ${fs.failAtOperation}`);
        // The reopened store removed every temporary file the crash left.
        const names = new NodeFileSystem().list(path);
        assert.ok(!names.some((name) => name.endsWith('.tmp')), `leftovers: ${names.join(', ')}`);
      }),
      { numRuns: 8 },
    );
  } finally {
    directory.remove();
  }
});

test('injected I/O errors fail the operation with LsmIoError and lose nothing', () => {
  fc.assert(
    fc.property(scenarioArb, ({ ops, faultAt }) => {
      const memory = new MemoryFileSystem();
      const dry = new FaultyFileSystem(new MemoryFileSystem());
      const open = (fs: LsmFileSystem) => () => LsmEngine.open(engineOptions(fs, '/db'));
      assert.equal(runScenario(ops, open(dry)).error, undefined);
      const fs = new FaultyFileSystem(memory);
      fs.fault = 'error';
      fs.failAtOperation = 1 + Math.floor(faultAt * dry.mutatingOperations);
      // Keep going after the error, as a server would; then finish and check.
      const log: LoggedWrite[] = [];
      let engine: LsmEngine | undefined;
      let failures = 0;
      for (const step of [{ op: 'reopen' } as Op, ...ops]) {
        try {
          if (step.op === 'reopen') {
            engine?.close({ flush: false });
            engine = open(fs)();
            // After a reopen the contract says: replay what is not durable.
            for (const write of log) {
              if (write.sequence <= engine.flushedSequence) continue;
              if (write.value === undefined) engine.delete(fromHex(write.key), { sequence: write.sequence });
              else engine.put(fromHex(write.key), fromHex(write.value), { sequence: write.sequence });
            }
          } else if (engine === undefined) {
          } else if (step.op === 'put') {
            const sequence = engine.put(key(step.key), value(step.value));
            log.push({ sequence, key: hex(key(step.key)), value: hex(value(step.value)) });
          } else if (step.op === 'delete') {
            const sequence = engine.delete(key(step.key));
            log.push({ sequence, key: hex(key(step.key)), value: undefined });
          } else if (step.op === 'flush') engine.flush();
          else if (step.op === 'step') engine.maintenanceStep(step.budget);
          else engine.tree.compactAll();
        } catch (error) {
          failures++;
          assert.ok(isLsmError(error, 'IPIPE_ERR_LSM_IO'), `unexpected ${String(error)}`);
          if (engine === undefined) engine = open(fs)(); // the failure was in open: retry it
        }
      }
      engine ??= open(fs)();
      // The fault may also land in this last flush: it fails like any other, and a retry (the
      // fault fired once) must then succeed — the store recovers in place, no reopen needed.
      try {
        engine.flush();
      } catch (error) {
        failures++;
        assert.ok(isLsmError(error, 'IPIPE_ERR_LSM_IO'), `unexpected ${String(error)}`);
        engine.flush();
      }
      const lastSequence = log.at(-1)?.sequence ?? 0;
      assert.ok(
        engine.flushedSequence >= lastSequence,
        `flushedSequence ${engine.flushedSequence} < ${lastSequence}`,
      );
      engine.close();
      // One injected fault fails at most one operation (none when it hit a best-effort deletion).
      assert.ok(failures <= 1, `${failures} operations failed for one injected fault`);
      // Everything was flushed: the reopened store holds the whole log without any replay.
      const reopened = open(fs)();
      try {
        assert.ok(
          reopened.flushedSequence >= lastSequence,
          `reopened at ${reopened.flushedSequence} < ${lastSequence}`,
        );
        assertMatchesModel(
          reopened,
          modelAt(log, Number.POSITIVE_INFINITY),
          `I/O error at ${fs.failAtOperation}`,
        );
      } finally {
        reopened.close({ flush: false });
      }
    }),
    { numRuns: 80 },
  );
});
