/**
 * The serializability checker (src/apps/dt/serializability.ts) rejects the classic anomalies —
 * lost update, write skew, dirty read, read skew, non-repeatable read — and accepts every history
 * produced by a real serial execution (a property test, seed printed).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  checkSerializable,
  describeViolation,
  type HistoryTxn,
  type SerializabilityResult,
  type Violation,
} from '../../../src/apps/dt/serializability.ts';

function violations(result: SerializabilityResult): readonly Violation[] {
  assert.equal(result.ok, false, 'the checker accepted a non-serializable history');
  return result.ok ? [] : result.violations;
}

test('a serial history is accepted and its serial order returned', () => {
  const history: HistoryTxn[] = [
    { id: 'T2', reads: [{ key: 'x', version: 1 }], writes: [{ key: 'x', version: 2 }] },
    { id: 'T1', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
    {
      id: 'T3',
      reads: [
        { key: 'x', version: 2 },
        { key: 'y', version: 0 },
      ],
      writes: [{ key: 'y', version: 1 }],
    },
  ];
  const result = checkSerializable(history, { contiguousVersions: true });
  assert.ok(result.ok, result.ok ? '' : result.violations.map(describeViolation).join('; '));
  assert.deepEqual(result.serialOrder, ['T1', 'T2', 'T3']);
});

test('lost update: two transactions install the same version', () => {
  const found = violations(
    checkSerializable([
      { id: 'T1', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
      { id: 'T2', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
    ]),
  );
  assert.equal(found[0]?.kind, 'duplicate-version');
  assert.match(describeViolation(found[0]!), /lost update: T1 and T2 both installed version 1 of x/);
});

test('lost update with the version bumped: both read x@0, one overwrites the other (cycle)', () => {
  const found = violations(
    checkSerializable([
      { id: 'T1', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
      { id: 'T2', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 2 }] },
    ]),
  );
  assert.equal(found[0]?.kind, 'cycle');
  const cycle = found[0]?.kind === 'cycle' ? found[0].cycle : [];
  assert.deepEqual(new Set(cycle.map((step) => step.kind)), new Set(['ww', 'rw']));
});

test('write skew: each reads both keys at 0 and writes a different one (rw cycle)', () => {
  const found = violations(
    checkSerializable([
      {
        id: 'T1',
        reads: [
          { key: 'x', version: 0 },
          { key: 'y', version: 0 },
        ],
        writes: [{ key: 'x', version: 1 }],
      },
      {
        id: 'T2',
        reads: [
          { key: 'x', version: 0 },
          { key: 'y', version: 0 },
        ],
        writes: [{ key: 'y', version: 1 }],
      },
    ]),
  );
  assert.equal(found.length, 1);
  const cycle = found[0]?.kind === 'cycle' ? found[0].cycle : [];
  assert.deepEqual(cycle.map((step) => `${step.from}-${step.kind}(${step.key})->${step.to}`).sort(), [
    'T1-rw(y)->T2',
    'T2-rw(x)->T1',
  ]);
});

test('dirty read: a read of a version no committed transaction installed', () => {
  const found = violations(
    checkSerializable([
      { id: 'T1', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
      // T2 saw version 2 of x — written by an attempt that aborted.
      { id: 'T2', reads: [{ key: 'x', version: 2 }], writes: [{ key: 'y', version: 1 }] },
    ]),
  );
  assert.deepEqual(found[0], { kind: 'read-of-unknown-version', txn: 'T2', key: 'x', version: 2 });
});

test('read skew: a reader sees one writer’s y but not its x (wr + rw cycle)', () => {
  const found = violations(
    checkSerializable([
      {
        id: 'W',
        reads: [],
        writes: [
          { key: 'x', version: 1 },
          { key: 'y', version: 1 },
        ],
      },
      {
        id: 'R',
        reads: [
          { key: 'x', version: 0 },
          { key: 'y', version: 1 },
        ],
        writes: [{ key: 'z', version: 1 }],
      },
    ]),
  );
  assert.equal(found[0]?.kind, 'cycle');
});

test('non-repeatable read, version gaps and duplicate ids are reported', () => {
  const nonRepeatable = violations(
    checkSerializable([
      { id: 'T1', reads: [{ key: 'x', version: 0 }], writes: [{ key: 'x', version: 1 }] },
      {
        id: 'T2',
        reads: [
          { key: 'x', version: 0 },
          { key: 'x', version: 1 },
        ],
        writes: [{ key: 'y', version: 1 }],
      },
    ]),
  );
  assert.ok(nonRepeatable.some((violation) => violation.kind === 'non-repeatable-read'));

  const gap: HistoryTxn[] = [{ id: 'T1', reads: [], writes: [{ key: 'x', version: 2 }] }];
  assert.ok(checkSerializable(gap).ok, 'gaps are allowed unless contiguousVersions');
  assert.deepEqual(violations(checkSerializable(gap, { contiguousVersions: true }))[0], {
    kind: 'version-gap',
    key: 'x',
    missing: 1,
  });

  const twice = violations(
    checkSerializable([
      { id: 'T1', reads: [], writes: [{ key: 'x', version: 1 }] },
      { id: 'T1', reads: [], writes: [{ key: 'y', version: 1 }] },
    ]),
  );
  assert.deepEqual(twice[0], { kind: 'duplicate-txn', txn: 'T1' });
});

test('property: every history recorded from a serial execution is accepted, in any order', () => {
  const seed = Number(process.env['DT_PROPERTY_SEED'] ?? 20261122);
  console.log(`serializability property seed ${seed} (DT_PROPERTY_SEED to change)`);
  const keys = ['a', 'b', 'c', 'd'];
  const txnArb = fc.record({
    reads: fc.uniqueArray(fc.constantFrom(...keys), { maxLength: 3 }),
    writes: fc.uniqueArray(fc.constantFrom(...keys), { minLength: 1, maxLength: 2 }),
  });
  let longHistories = 0;
  fc.assert(
    fc.property(
      // size 'max': at fast-check's default size a history has at most 10 transactions over 4
      // keys, short chains of versions; the count below shows histories of 20+ are checked.
      fc.array(txnArb, { minLength: 1, maxLength: 30, size: 'max' }),
      fc.infiniteStream(fc.nat()),
      (txns, shuffle) => {
        if (txns.length >= 20) longHistories++;
        // Run the transactions one after another over versioned keys.
        const versions = new Map<string, number>();
        const history: HistoryTxn[] = txns.map((txn, i) => ({
          id: `T${i}`,
          reads: txn.reads.map((key) => ({ key, version: versions.get(key) ?? 0 })),
          writes: txn.writes.map((key) => {
            const version = (versions.get(key) ?? 0) + 1;
            versions.set(key, version);
            return { key, version };
          }),
        }));
        // The checker must not depend on the order the history was recorded in.
        const shuffled = [...history];
        const draws = shuffle[Symbol.iterator]();
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = draws.next().value % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        const result = checkSerializable(shuffled, { contiguousVersions: true });
        if (!result.ok) throw new Error(result.violations.map(describeViolation).join('; '));
        // Replaying the returned order reproduces every read.
        const replay = new Map<string, number>();
        const byId = new Map(history.map((txn) => [txn.id, txn]));
        for (const id of result.serialOrder) {
          const txn = byId.get(id)!;
          for (const read of txn.reads) assert.equal(read.version, replay.get(read.key) ?? 0);
          for (const write of txn.writes) replay.set(write.key, write.version);
        }
      },
    ),
    { seed, numRuns: 300 },
  );
  assert.ok(longHistories >= 30, `only ${longHistories} of 300 histories had 20+ transactions`);
});
