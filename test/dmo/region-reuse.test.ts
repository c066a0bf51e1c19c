/**
 * Which free region a new heap gets. A `bytes()` / `getView()` view is a plain typed array and
 * outlives `releaseHeap` (nothing can revoke it), so a released region goes back to its last
 * owner first, then a never-used region is preferred, and another actor's released region is
 * handed out only when nothing else is free (see DmoDomain.releaseHeap, docs/dmo-isolation.md).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  adoptRegionImage,
  type DmoDomain,
  type DmoHeap,
  regionImageSize,
  writeRegionImage,
} from '../../src/dmo/index.ts';
import { actorId, type ObjectId } from '../../src/ids.ts';
import { A, B, makeDomain } from './helpers.ts';

const C = actorId(3);
const REGION_BYTES = 4096;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Index of the region holding `heap`'s object `id`, from the domain's object table. */
function regionIndexOf(domain: DmoDomain, id: ObjectId): number {
  const row = [...domain.objectTable()].find((candidate) => candidate.objectId === id);
  assert.ok(row !== undefined, `object ${id} is in the table`);
  return Math.floor((row.start - 64) / REGION_BYTES);
}

function firstObjectRegion(domain: DmoDomain, heap: DmoHeap): number {
  return regionIndexOf(domain, heap.allocate(16));
}

test('a view kept past releaseHeap does not reach the next actor while a never-used region is free', () => {
  const domain = makeDomain({ regionBytes: REGION_BYTES, maxActors: 2 });
  const a = domain.createHeap(A);
  const view = a.bytes(a.allocate(64)); // kept, e.g. in a module variable
  domain.releaseHeap(A);
  const c = domain.createHeap(C);
  const secret = c.allocate(64);
  c.write(secret, 0, encoder.encode('actor-3-secret'));
  assert.equal(regionIndexOf(domain, secret), 1, 'actor 3 got the never-used region');
  assert.notEqual(decoder.decode(view.subarray(0, 14)), 'actor-3-secret');
  view.set(encoder.encode('overwritten!!!'));
  assert.equal(decoder.decode(c.read(secret, 0, 14)), 'actor-3-secret');
});

test('a released region goes back to the actor that held it last', () => {
  const domain = makeDomain({ regionBytes: REGION_BYTES, maxActors: 3 });
  const a = domain.createHeap(A);
  assert.equal(firstObjectRegion(domain, a), 0);
  const b = domain.createHeap(B);
  assert.equal(firstObjectRegion(domain, b), 1);
  domain.releaseHeap(A);
  domain.releaseHeap(B);
  // B first: region 2 was never used, but region 1 was B's.
  assert.equal(firstObjectRegion(domain, domain.createHeap(B)), 1);
  assert.equal(firstObjectRegion(domain, domain.createHeap(A)), 0);
});

test("another actor's released region is still handed out when nothing else is free", () => {
  const domain = makeDomain({ regionBytes: REGION_BYTES, maxActors: 2 });
  domain.createHeap(A);
  domain.createHeap(B);
  domain.releaseHeap(B);
  domain.releaseHeap(A);
  // Neither released region is actor 3's and none was never used: the first free one.
  const c = domain.createHeap(C);
  assert.equal(firstObjectRegion(domain, c), 0);
  assert.equal(c.stats().liveObjects, 1);
  // Actor 1 now finds its region taken and gets B's.
  assert.equal(firstObjectRegion(domain, domain.createHeap(A)), 1);
});

test('an adopted region image follows the same order (migration in, out and back)', () => {
  const source = makeDomain({ regionBytes: REGION_BYTES, maxActors: 1 });
  const a = source.createHeap(A);
  const id = a.allocate(32);
  a.write(id, 0, encoder.encode('state of actor 1'));
  const image = new Uint8Array(regionImageSize(a));
  writeRegionImage(a, image, 0);
  const target = makeDomain({ regionBytes: REGION_BYTES, maxActors: 3 });
  target.createHeap(B);
  target.releaseHeap(B); // region 0: released, last held by actor 2
  const adopted = adoptRegionImage(target, A, image);
  assert.equal(regionIndexOf(target, id), 1, "the never-used region, not actor 2's released one");
  assert.equal(decoder.decode(adopted.read(id, 0, 16)), 'state of actor 1');
  target.releaseHeap(A); // actor 1 migrates away again…
  target.createHeap(C); // …another actor arrives (region 2: never used)…
  adoptRegionImage(target, A, image); // …and actor 1 comes back to its own last region.
  assert.equal(regionIndexOf(target, id), 1);
});
