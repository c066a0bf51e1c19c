/**
 * The mailbox against an array model: random push / shift / peek / drainTo sequences, unbounded
 * and bounded, keep FIFO order across growth and wrap-around, never lose a message, and a
 * bounded mailbox refuses (returns false, changes nothing) exactly at its bound.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Mailbox } from '../../src/actor/index.ts';

type Op =
  | { kind: 'push'; count: number }
  | { kind: 'shift'; count: number }
  | { kind: 'peek' }
  | { kind: 'drain' };

// Bursts of pushes and shifts move head and tail around the ring and force growth mid-wrap.
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('push' as const), count: fc.integer({ min: 1, max: 40 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('shift' as const), count: fc.integer({ min: 1, max: 40 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'peek' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'drain' as const }) },
);

/**
 * Runs `ops` on a mailbox and on an array, checking they agree after every step. Returns the most
 * messages held at once and how many pushes were refused, so callers can count the runs that grew
 * the ring past its 16 initial slots or up to its bound.
 */
function checkAgainstModel(bound: number, ops: readonly Op[]): { peakLength: number; refused: number } {
  let peakLength = 0;
  const mailbox = new Mailbox<number>(bound);
  const model: number[] = [];
  let next = 0;
  const delivered: number[] = [];
  const refused: number[] = [];
  for (const step of ops) {
    switch (step.kind) {
      case 'push':
        for (let i = 0; i < step.count; i++) {
          const value = next++;
          const accepted = mailbox.push(value);
          assert.equal(accepted, model.length < bound, `push at length ${model.length}, bound ${bound}`);
          if (accepted) model.push(value);
          else refused.push(value);
        }
        break;
      case 'shift':
        for (let i = 0; i < step.count; i++) {
          const got = mailbox.shift();
          assert.equal(got, model.shift());
          if (got !== undefined) delivered.push(got);
        }
        break;
      case 'peek':
        assert.equal(mailbox.peek(), model[0]);
        break;
      case 'drain': {
        const drained: number[] = [];
        assert.equal(
          mailbox.drainTo((m) => drained.push(m)),
          model.length,
        );
        assert.deepStrictEqual(drained, model);
        delivered.push(...drained);
        model.length = 0;
        break;
      }
    }
    assert.equal(mailbox.length, model.length);
    assert.equal(mailbox.isEmpty(), model.length === 0);
    assert.ok(mailbox.length <= bound);
    assert.deepStrictEqual(mailbox.toArray(), model);
    peakLength = Math.max(peakLength, model.length);
  }
  // Nothing lost, nothing duplicated: every value was delivered, is still queued, or was refused.
  const accounted = [...delivered, ...model, ...refused].sort((a, b) => a - b);
  assert.deepStrictEqual(
    accounted,
    Array.from({ length: next }, (_, i) => i),
  );
  // FIFO: delivered values come out in increasing order (they went in in increasing order).
  for (let i = 1; i < delivered.length; i++) assert.ok(delivered[i - 1]! < delivered[i]!);
  return { peakLength, refused: refused.length };
}

describe('mailbox', () => {
  // size 'max' on the operation arrays: fast-check's default size stops at 10 operations. The
  // thresholds below sit between what the default size reaches (222 and 109 of 500 in one run)
  // and what full size does (438 and 281).
  it('matches an array model under random operations (unbounded)', () => {
    let grewTwice = 0;
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80, size: 'max' }), (ops) => {
        if (checkAgainstModel(Number.POSITIVE_INFINITY, ops).peakLength > 32) grewTwice++;
      }),
      { numRuns: 500 },
    );
    assert.ok(grewTwice >= 300, `only ${grewTwice} of 500 runs held more than 32 messages`);
  });

  it('matches an array model under random operations with a bound (push refuses at the bound)', () => {
    let grewToBound = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.array(op, { maxLength: 80, size: 'max' }),
        (bound, ops) => {
          const { refused } = checkAgainstModel(bound, ops);
          if (bound > 16 && refused > 0) grewToBound++;
        },
      ),
      { numRuns: 500 },
    );
    assert.ok(grewToBound >= 180, `only ${grewToBound} of 500 runs refused a push at a bound above 16`);
  });

  it('keeps FIFO order when it grows while wrapped around', () => {
    const mailbox = new Mailbox<number>();
    for (let i = 0; i < 16; i++) mailbox.push(i); // fill the initial 16 slots
    for (let i = 0; i < 10; i++) assert.equal(mailbox.shift(), i); // head moves to slot 10
    for (let i = 16; i < 26; i++) mailbox.push(i); // tail wraps to slot 4: the ring is full
    mailbox.push(26); // grows while wrapped
    assert.deepStrictEqual(
      mailbox.toArray(),
      Array.from({ length: 17 }, (_, i) => i + 10),
    );
  });

  it('a bounded mailbox refuses at its bound and accepts again after a shift', () => {
    const mailbox = new Mailbox<string>(3);
    assert.equal(mailbox.bound, 3);
    assert.ok(mailbox.push('a') && mailbox.push('b') && mailbox.push('c'));
    assert.equal(mailbox.push('d'), false);
    assert.deepStrictEqual(mailbox.toArray(), ['a', 'b', 'c']);
    assert.equal(mailbox.shift(), 'a');
    assert.ok(mailbox.push('d'));
    assert.deepStrictEqual(mailbox.toArray(), ['b', 'c', 'd']);
  });

  it('answers undefined when empty and refuses a non-positive bound', () => {
    const mailbox = new Mailbox<number>();
    assert.equal(mailbox.shift(), undefined);
    assert.equal(mailbox.peek(), undefined);
    assert.equal(
      mailbox.drainTo(() => assert.fail('nothing to drain')),
      0,
    );
    for (const bound of [0, -1, Number.NaN]) assert.throws(() => new Mailbox(bound), RangeError);
  });
});
