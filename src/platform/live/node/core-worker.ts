/**
 * One core of a live domain (iPipe §4: a NIC or host core running handlers to completion): a
 * worker thread that attaches its domain's DMO memory, imports the node's actor modules, and
 * loops — take a work item from its ring, run the actor's handler on the shared heap, put the
 * result (time taken, messages sent) on its result ring. It holds no actor state of its own:
 * roots and timers live in each actor's heap (DmoStateStore), so any core can run any actor and a
 * migration that moves the heap moves everything.
 *
 * The core blocks in `Atomics.wait` when its ring is empty (after a short spin), so an idle core
 * costs nothing; a runaway handler is stopped by the controller terminating this thread.
 */

import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { MessageCodec } from '../../../actor/codec.ts';
import { readU32At } from '../../../actor/codec-field-base.ts';
import type { ActorLogger, PendingTimer, TimerId } from '../../../actor/context.ts';
import type { ClientOrigin, Origin } from '../../../actor/envelope.ts';
import { DmoDomain } from '../../../dmo/domain.ts';
import { IpipeError } from '../../../errors.ts';
import type { ActorId } from '../../../ids.ts';
import type { ActorPorts } from '../../../runtime/actor-instance.ts';
import { RING_CORRUPT, RING_EMPTY, type RingMemory, SpscRing } from '../channel/ring.ts';
import type { CatalogEntry } from './actor-catalog.ts';
import { wallNs } from './clock.ts';
import { ActorInstances, CoreActors } from './core-actors.ts';
import {
  FrameBuilder,
  FrameReader,
  OUT_REPLY,
  OUT_REPLY_WORK,
  OUT_SEND,
  OUT_TIMER,
  RESULT_DONE,
  RESULT_FAILED,
  WORK_EXEC,
  WORK_FORGET,
  WORK_STOP,
  WORK_TIMER,
} from './core-protocol.ts';

export interface CoreWorkerData {
  readonly entry: string;
  readonly domainBuffer: SharedArrayBuffer;
  /** The rings' `memory` (WebAssembly.Memory where there is one: the core checks records in WebAssembly too). */
  readonly workRing: RingMemory;
  readonly resultRing: RingMemory;
  readonly catalog: readonly CatalogEntry[];
  readonly core: number;
  readonly spinIterations: number;
}

const data = workerData as CoreWorkerData;
const domain = DmoDomain.attach(data.domainBuffer);
const work = SpscRing.attach(data.workRing, { spinIterations: data.spinIterations });
const results = SpscRing.attach(data.resultRing, { spinIterations: data.spinIterations });
const actors = await CoreActors.load(data.catalog);

// Tell the controller this core can take work (importing the actor modules can take a while,
// and work sent before then would count against the watchdog).
parentPort?.postMessage('ready');

const out = new FrameBuilder();
let outputs = 0;
let outputsAt = 0;
/** The origin of the EXEC item being run (REPLY_WORK answers it); undefined outside one. */
let workOrigin: Origin | undefined;

const log: ActorLogger = {
  debug() {},
  info() {},
  warn(fields, message) {
    process.stderr.write(`${JSON.stringify({ level: 'warn', core: data.core, ...fields, msg: message })}\n`);
  },
  error(fields, message) {
    process.stderr.write(`${JSON.stringify({ level: 'error', core: data.core, ...fields, msg: message })}\n`);
  },
};

function encodeFor(codec: MessageCodec<unknown>, message: unknown): void {
  const at = out.reserveField(codec.sizeOf(message));
  codec.encodeInto(message, out.bytes, at);
}

const ports: ActorPorts = {
  now: wallNs,
  route(_from, target, message, _sizeBytes, origin: Origin) {
    const known = actors.get(target);
    out.u8(OUT_SEND);
    out.u32(target);
    out.origin(origin);
    // Unknown targets still travel (as an empty message): the controller counts the drop.
    if (known) encodeFor(known.definition.messages, message);
    else out.u32(0);
    outputs++;
  },
  replyToClient(_from, origin: ClientOrigin, message, codec) {
    // Answering the request being run (the object it was decoded into, not just an equal one):
    // the controller holds that origin already, so it does not travel back (see core-protocol.ts).
    if (origin === workOrigin) out.u8(OUT_REPLY_WORK);
    else {
      out.u8(OUT_REPLY);
      out.origin(origin);
    }
    encodeFor(codec, message);
    outputs++;
  },
  codecOf(target) {
    return actors.get(target)?.definition.messages;
  },
  armTimer(actor, timer: PendingTimer<unknown>) {
    out.u8(OUT_TIMER);
    out.u32(actor);
    out.u32(timer.id);
    out.f64(timer.dueAtNs);
    outputs++;
  },
  lookup: (name) => actors.refByName(name),
  log,
};

const instances = new ActorInstances(domain, actors, ports);

function beginResult(tag: number): void {
  out.reset();
  out.u8(RESULT_DONE);
  out.u32(tag);
  out.f64(0); // exec ns, patched in finish
  outputsAt = out.length;
  out.u16(0); // outputs, patched in finish
  outputs = 0;
}

function finishResult(execNs: number): void {
  out.view.setFloat64(5, execNs, true);
  out.view.setUint16(outputsAt, outputs, true);
  publish(out.frame);
}

function failResult(tag: number, execNs: number, error: unknown): void {
  out.reset();
  out.u8(RESULT_FAILED);
  out.u32(tag);
  out.f64(execNs);
  const code = error instanceof IpipeError ? error.code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
  out.text(code, 1);
  out.text(error instanceof Error ? error.message : String(error), 2);
  publish(out.frame);
}

function publish(frame: Uint8Array): void {
  if (results.tryWrite(frame)) return;
  // Back-pressure: the controller is behind. Wait for room rather than drop a result.
  results.write(frame);
}

const reader = new FrameReader();

/**
 * A handler expected to run longer than this is not kept waiting behind: results finished before
 * it are published first. About what waking the controller costs on these machines (~25–30 µs),
 * so a batch is broken up only where holding it would cost more than the extra wake-up.
 */
const PUBLISH_BEFORE_NS = 25_000;
/** Each actor's recent handler time here, ns (an EWMA, 1/8 weight to the newest run). */
const typicalRunNs = new Map<ActorId, number>();

/** How long the work item at `at` will likely run: its actor's recent handler time (∞ if unknown). */
function expectedRunNs(bytes: Uint8Array, at: number): number {
  const kind = bytes[at];
  if (kind !== WORK_EXEC && kind !== WORK_TIMER) return 0;
  return typicalRunNs.get(readU32At(bytes, at + 5) as ActorId) ?? Number.POSITIVE_INFINITY;
}

function noteRun(actor: ActorId, ns: number): void {
  const typical = typicalRunNs.get(actor);
  typicalRunNs.set(actor, typical === undefined ? ns : typical + (ns - typical) / 8);
}

/** Runs the work item at `work.bytes[start, end)` (read where it lies in the ring). */
function handle(start: number, end: number): boolean {
  reader.resetWindow(work.bytes, start, end);
  const kind = reader.u8();
  if (kind === WORK_STOP) return false;
  if (kind === WORK_FORGET) {
    instances.forget(reader.u32() as ActorId);
    return true;
  }
  const tag = reader.u32();
  const actor = reader.u32() as ActorId;
  const started = performance.now();
  // Whether a failure reaches anyone: a client hears it as an error reply; an actor's message or a
  // timer has nobody to tell, so the failure is logged here (else it would vanish without a trace).
  let clientWaits = false;
  beginResult(tag);
  try {
    const instance = instances.get(actor);
    if (!instance)
      throw new IpipeError('IPIPE_ERR_ACTOR_UNKNOWN', `actor ${actor} has no heap in this domain`);
    if (kind === WORK_EXEC) {
      const origin = reader.origin();
      clientWaits = origin.kind === 'client';
      const payload = reader.bytesField();
      if (!reader.ok) throw new IpipeError('IPIPE_ERR_CODEC_DECODE', 'malformed work item');
      const message = instance.definition.messages.decode(payload);
      workOrigin = origin;
      instance.exec(message, origin);
    } else if (kind === WORK_TIMER) {
      instance.fireTimer(reader.u32() as TimerId);
    }
    const ranNs = (performance.now() - started) * 1e6;
    noteRun(actor, ranNs);
    finishResult(ranNs);
  } catch (error) {
    if (!clientWaits) {
      const code = error instanceof IpipeError ? error.code : 'IPIPE_ERR_ACTOR_HANDLER_FAILED';
      log.error(
        {
          actor: actors.get(actor)?.entry.name ?? actor,
          work: kind === WORK_TIMER ? 'timer' : 'message',
          code,
        },
        `a handler failed with no client to tell, its outputs dropped: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    const ranNs = (performance.now() - started) * 1e6;
    noteRun(actor, ranNs);
    failResult(tag, ranNs, error);
  } finally {
    workOrigin = undefined;
  }
  return true;
}

for (;;) {
  const length = work.peek();
  if (length === RING_EMPTY) {
    results.flush();
    if (work.waitForData() === 'closed') break;
    continue;
  }
  if (length === RING_CORRUPT) {
    work.consume();
    continue;
  }
  // Results are published in batches while work keeps coming (one doorbell for many: on a shared
  // CPU each wake-up of the controller is a context switch), but never held back behind a handler
  // that may be long: a result kept until the ring empties waits out the whole next handler, and so
  // does what it carries (a client's reply, messages to other actors). On a host core the next item
  // is often RKV's durable-log write and fsync (0.5–8 ms on a shared disk), so a SET's reply waited
  // for the next write's fsync (docs/apps/rkv-cluster.md "Where a SET waits"). So before an item
  // whose actor's handlers have lately taken longer than a wake-up costs (or whose actor has not
  // run here yet), what is finished goes out first.
  if (expectedRunNs(work.bytes, work.peekOffset) > PUBLISH_BEFORE_NS) results.flush();
  const keepGoing = handle(work.peekOffset, work.peekOffset + length);
  work.consume();
  if (!work.hasData()) results.flush();
  if (!keepGoing) break;
}
results.flush();
