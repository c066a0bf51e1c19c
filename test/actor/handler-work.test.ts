/**
 * HandlerWork validation: the cost hook's answer is checked field by field (typos included), and
 * an invalid answer is an ActorDefinitionError naming the actor and listing every problem.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACCELERATOR_KINDS,
  type HandlerWork,
  handlerWorkProblems,
  isAcceleratorKind,
  validateHandlerWork,
} from '../../src/actor/index.ts';
import { ActorDefinitionError } from '../../src/errors.ts';

describe('handler work', () => {
  it('accepts every field at valid values and returns the same object', () => {
    const work: HandlerWork = {
      instructions: 1200,
      ipc: 1.4,
      mpki: 0.6,
      memoryAccesses: 12,
      workingSetBytes: 4096,
      accelerators: [
        { kind: 'md5', bytes: 1024 },
        { kind: 'aes', bytes: 64, batch: 8 },
      ],
      fixedNs: 250,
    };
    assert.deepStrictEqual(handlerWorkProblems(work), []);
    assert.equal(validateHandlerWork(work, 'hasher'), work);
    assert.deepStrictEqual(handlerWorkProblems({ instructions: 0, fixedNs: 1500 }), []);
  });

  it('knows the eleven accelerators of Table 3', () => {
    assert.deepStrictEqual(
      [...ACCELERATOR_KINDS],
      ['crc', 'md5', 'sha1', '3des', 'aes', 'kasumi', 'sms4', 'snow3g', 'fau', 'zip', 'dfa'],
    );
    assert.ok(isAcceleratorKind('snow3g'));
    assert.ok(!isAcceleratorKind('sha256'));
    assert.ok(!isAcceleratorKind(3));
  });

  const invalid: readonly [string, unknown, RegExp][] = [
    ['not an object', 1200, /expected an object/],
    ['null', null, /expected an object/],
    ['an array', [1200], /expected an object/],
    ['missing instructions', { ipc: 1 }, /instructions: required/],
    ['negative instructions', { instructions: -1 }, /instructions: required, a finite number ≥ 0/],
    ['infinite instructions', { instructions: Number.POSITIVE_INFINITY }, /instructions/],
    ['NaN instructions', { instructions: Number.NaN }, /instructions/],
    ['zero ipc', { instructions: 1, ipc: 0 }, /ipc: must be a finite number > 0/],
    ['negative mpki', { instructions: 1, mpki: -0.1 }, /mpki/],
    [
      'fractional memoryAccesses',
      { instructions: 1, memoryAccesses: 1.5 },
      /memoryAccesses: must be an integer/,
    ],
    ['string workingSetBytes', { instructions: 1, workingSetBytes: '4k' }, /workingSetBytes/],
    ['negative fixedNs', { instructions: 1, fixedNs: -5 }, /fixedNs/],
    ['a misspelt key', { instructions: 1, instrutions: 5 }, /instrutions: unknown key/],
    [
      'accelerators not an array',
      { instructions: 1, accelerators: { kind: 'aes' } },
      /accelerators: must be an array/,
    ],
    [
      'an unknown accelerator',
      { instructions: 1, accelerators: [{ kind: 'gpu', bytes: 1 }] },
      /accelerators\[0\]\.kind/,
    ],
    [
      'fractional bytes',
      { instructions: 1, accelerators: [{ kind: 'aes', bytes: 0.5 }] },
      /accelerators\[0\]\.bytes/,
    ],
    [
      'zero batch',
      { instructions: 1, accelerators: [{ kind: 'aes', bytes: 1, batch: 0 }] },
      /batch: must be an integer ≥ 1/,
    ],
    [
      'an accelerator typo',
      { instructions: 1, accelerators: [{ kind: 'aes', byte: 1 }] },
      /\.byte: unknown key/,
    ],
    ['a non-object accelerator', { instructions: 1, accelerators: ['aes'] }, /accelerators\[0\]: expected/],
  ];

  for (const [what, work, pattern] of invalid) {
    it(`refuses ${what}`, () => {
      const problems = handlerWorkProblems(work);
      assert.ok(problems.length > 0);
      assert.match(problems.join('\n'), pattern);
      assert.throws(
        () => validateHandlerWork(work, 'hasher'),
        (error: unknown) =>
          error instanceof ActorDefinitionError &&
          error.code === 'IPIPE_ERR_ACTOR_INVALID_DEFINITION' &&
          /actor "hasher": cost\(\) returned invalid work/.test(error.message) &&
          pattern.test(error.message),
      );
    });
  }

  it('lists every problem, not just the first', () => {
    const problems = handlerWorkProblems({
      instructions: -1,
      ipc: 0,
      accelerators: [{ kind: 'x', bytes: -1 }],
    });
    assert.equal(problems.length, 4);
  });
});
