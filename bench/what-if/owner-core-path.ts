/**
 * WHAT-IF PROTOTYPE, not part of ipipe (docs/live-echo-path.md, "What if a NIC core owned the
 * socket?"). The per-datagram path of a NIC core that owns the node's UDP socket — the wire checks
 * (CRC-32C), the client record, dedup, the actor's decode and handler on its DMO heap, the reply
 * encoded into a slab and sealed (CRC-32C), dedup's copy of it, send — in one thread, with the
 * node's own code from src. `createOwnerPath` is shared by the worker below and the socket-free
 * measurement in owner-core.ts, so both time the same code.
 *
 * Run as a worker (owner-core.ts starts it through the core bootstrap) it binds a socket on
 * 127.0.0.1 and serves; mode 'raw' is a bare echo in a worker (the thread's own cost), 'sched'
 * also puts each request through a one-core HybridScheduler, `fd` wraps a socket the main thread
 * bound (bind({ fd }): the sharing experiment).
 */

import dgram from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { MessageCodec } from '../../src/actor/codec.ts';
import type { AnyActorDefinition } from '../../src/actor/define-actor.ts';
import type { ClientOrigin, Origin } from '../../src/actor/envelope.ts';
import { DmoDomain } from '../../src/dmo/domain.ts';
import type { ActorId } from '../../src/ids.ts';
import { literalLookup } from '../../src/platform/live/net/literal-lookup.ts';
import { FrameView, HEADER_BYTES, readFrameInto, sealFrame } from '../../src/platform/live/net/wire.ts';
import { type CatalogEntry, loadDefinitions } from '../../src/platform/live/node/actor-catalog.ts';
import { ClientDirectory } from '../../src/platform/live/node/client-directory.ts';
import { wallNs, wallNsAt } from '../../src/platform/live/node/clock.ts';
import { type LiveClient, LiveRequest } from '../../src/platform/live/node/live-request.ts';
import { NOT_FOUND, RequestDedup } from '../../src/platform/live/node/request-dedup.ts';
import { ActorInstance, type ActorPorts } from '../../src/runtime/actor-instance.ts';
import { DmoStateStore } from '../../src/runtime/dmo-state-store.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';

/** Slots of the counters block (a Float64Array over a SharedArrayBuffer the main thread reads). */
export const STAT_DATAGRAMS = 0;
export const STAT_REQUESTS = 1;
export const STAT_COMPLETIONS = 2;
export const STAT_HANDLER_NS = 3;
export const STAT_DUPLICATES = 4;
export const STAT_DROPS = 5;
export const STAT_DECISIONS = 6;
export const STAT_SLOTS = 8;

export interface OwnerPathOptions {
  readonly domain: DmoDomain;
  readonly catalog: readonly CatalogEntry[];
  readonly definitions: readonly AnyActorDefinition[];
  readonly send: (bytes: Uint8Array, port: number, address: string) => void;
  readonly stats: Float64Array;
  /** Also run each request through a one-core HybridScheduler (arrive, takeFcfs, complete). */
  readonly useScheduler: boolean;
}

const MAX_FRAME_BYTES = 1472;
const SLAB_BYTES = 64 * 1024;

/** Returns the per-datagram function of a socket-owning core over `options.domain`'s actors. */
export function createOwnerPath(
  options: OwnerPathOptions,
): (message: Uint8Array, remote: { readonly address: string; readonly port: number }) => void {
  const { domain, catalog, definitions, send, stats, useScheduler } = options;
  const frame = new FrameView();
  const clients = new ClientDirectory();
  const dedup = new RequestDedup(65_536);
  let slab = new Uint8Array(SLAB_BYTES);
  let slabUsed = 0;
  const replyFrame = (size: number): Uint8Array => {
    if (slabUsed + size > SLAB_BYTES) {
      slab = new Uint8Array(SLAB_BYTES);
      slabUsed = 0;
    }
    const at = slabUsed;
    slabUsed = (at + size + 7) & ~7;
    return slab.subarray(at, at + size);
  };
  // The request being run: replyToClient answers it (handlers run to completion, never nest).
  let currentEntry = -1;
  let currentClientId = 0;
  const ports: ActorPorts = {
    now: wallNs,
    route() {
      throw new Error('what-if owner core: the echo actor sends nothing');
    },
    replyToClient(from, origin: ClientOrigin, message, codec: MessageCodec<unknown>) {
      const size = codec.sizeOf(message);
      const reply = replyFrame(HEADER_BYTES + size);
      codec.encodeInto(message, reply, HEADER_BYTES);
      const fields = {
        kind: 'reply',
        targetActorId: from,
        requestId: origin.requestId,
        clientId: currentClientId,
      } as const;
      sealFrame(reply, fields, size, 0, MAX_FRAME_BYTES);
      dedup.setReply(currentEntry, reply);
      dedup.takeArrivalNs(currentEntry);
      send(reply, origin.endpoint.port, origin.endpoint.address);
    },
    codecOf: () => undefined,
    armTimer() {},
    lookup: () => undefined,
    log: { debug() {}, info() {}, warn() {}, error() {} },
  };
  const scheduler = new HybridScheduler<LiveRequest>({
    cores: 1,
    settings: { enableMigration: false, coreQueueDepth: 16 },
  });
  const instances = new Map<ActorId, ActorInstance>();
  catalog.forEach((entry, index) => {
    const definition = definitions[index];
    const heap = domain.heapOf(entry.id);
    if (!definition || !heap) throw new Error(`what-if owner core: actor ${entry.name} has no heap`);
    scheduler.addActor({ id: entry.id, placement: 'any', exclusive: false, domain: 'nic' });
    const store = DmoStateStore.open(heap, definition.messages);
    const instance = new ActorInstance(definition, entry.id, entry.name, heap, ports, store);
    instance.markReady();
    instances.set(entry.id, instance);
  });

  return (message, remote) => {
    stats[STAT_DATAGRAMS]! += 1;
    const bytes = new Uint8Array(message.buffer, message.byteOffset, message.byteLength);
    if (readFrameInto(bytes, frame, MAX_FRAME_BYTES) !== undefined || frame.kind !== 'request') {
      stats[STAT_DROPS]! += 1;
      return;
    }
    stats[STAT_REQUESTS]! += 1;
    const nowMs = performance.now();
    const client: LiveClient = clients.ownClient(frame.clientId, remote.address, remote.port, nowMs);
    const seen = dedup.find(frame.clientId, frame.requestId);
    if (seen !== NOT_FOUND) {
      stats[STAT_DUPLICATES]! += 1;
      const cached = dedup.reply(seen);
      if (cached) send(cached, remote.port, remote.address);
      return;
    }
    const instance = instances.get(frame.targetActorId as ActorId);
    if (!instance) {
      stats[STAT_DROPS]! += 1;
      return;
    }
    const origin: Origin = { kind: 'client', endpoint: client.endpoint, requestId: frame.requestId };
    const arrivalNs = wallNsAt(nowMs);
    currentEntry = dedup.add(frame.clientId, frame.requestId, arrivalNs);
    currentClientId = client.clientId;
    const payload = bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    let startedMs = nowMs;
    if (useScheduler) {
      const request = new LiveRequest(instance.id, origin, payload, 0, client, arrivalNs);
      scheduler.arrive(request, arrivalNs);
      const work = scheduler.takeFcfs(0, arrivalNs);
      if (work?.kind !== 'exec') throw new Error(`what-if owner core: the scheduler gave ${work?.kind}`);
      startedMs = performance.now();
    }
    instance.exec(instance.definition.messages.decode(payload), origin);
    const endMs = performance.now();
    const ranNs = (endMs - startedMs) * 1e6;
    if (useScheduler && scheduler.complete(0, wallNsAt(endMs), ranNs).length > 0) stats[STAT_DECISIONS]! += 1;
    stats[STAT_COMPLETIONS]! += 1;
    stats[STAT_HANDLER_NS]! += ranNs;
  };
}

/** What owner-core.ts hands the worker. */
export interface OwnerCoreData {
  readonly entry: string;
  readonly whatIf: 'owner-core';
  readonly mode: 'full' | 'sched' | 'raw';
  readonly fd: number | undefined;
  readonly domainBuffer: SharedArrayBuffer;
  readonly catalog: readonly CatalogEntry[];
  readonly stats: SharedArrayBuffer;
}

async function serveAsWorker(data: OwnerCoreData): Promise<void> {
  const stats = new Float64Array(data.stats);
  const socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 1 << 22, lookup: literalLookup() });
  socket.on('error', () => {});
  if (data.mode === 'raw') {
    socket.on('message', (message, remote) => {
      stats[STAT_DATAGRAMS]! += 1;
      socket.send(message, 0, message.length, remote.port, remote.address);
    });
  } else {
    const onDatagram = createOwnerPath({
      domain: DmoDomain.attach(data.domainBuffer),
      catalog: data.catalog,
      definitions: await loadDefinitions(data.catalog),
      send: (bytes, port, address) => socket.send(bytes, port, address),
      stats,
      useScheduler: data.mode === 'sched',
    });
    socket.on('message', onDatagram);
  }
  const ready = () => parentPort?.postMessage({ port: socket.address().port });
  if (data.fd !== undefined) socket.bind({ fd: data.fd }, ready);
  else socket.bind(0, '127.0.0.1', ready);
}

const data = workerData as Partial<OwnerCoreData> | null;
if (!isMainThread && data?.whatIf === 'owner-core') await serveAsWorker(data as OwnerCoreData);
