import assert from 'node:assert/strict';
import { test } from 'node:test';
import { counter } from '../../examples/counter.ts';
import { LocalRuntime } from '../../src/runtime/local-runtime.ts';

test('the README example counts per key, survives a relocation, and replies to its client', () => {
  const runtime = new LocalRuntime();
  const ref = runtime.spawn(counter);
  runtime.tell(ref, { type: 'add', key: 7, amount: 2 });
  runtime.tell(ref, { type: 'add', key: 7, amount: 3.5 });
  runtime.tell(ref, { type: 'add', key: 8, amount: 1 });
  runtime.runUntilIdle();
  runtime.relocate(ref.id);
  runtime.request(ref, { type: 'get', key: 7 }, 1);
  runtime.request(ref, { type: 'get', key: 9 }, 2);
  runtime.runUntilIdle();
  assert.deepEqual(
    runtime.replies.map((r) => [r.requestId, r.message]),
    [
      [1, { type: 'value', amount: 5.5 }],
      [2, { type: 'value', amount: 0 }],
    ],
  );
});
