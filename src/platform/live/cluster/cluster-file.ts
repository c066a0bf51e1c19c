/**
 * A cluster of live nodes as one JSON document that every node process reads: where each node
 * listens, and which actor instances run on which node. Every node builds the same catalog from
 * it (same ids, same names), so an actor on one node addresses an actor on another by name or id
 * and the NIC controllers forward between them (PEER frames, see net/wire.ts).
 *
 *   {
 *     "schemaVersion": 1,
 *     "nodes":  [ { "id": 0, "address": "127.0.0.1", "port": 9100 }, { "id": 1, … } ],
 *     "actors": [ { "name": "front", "module": "/abs/actors.ts", "exportName": "front", "node": 0 },
 *                 { "name": "ledger-far", "module": "/abs/actors.ts", "exportName": "farLedger", "node": 1,
 *                   "domain": "host" } ]
 *   }
 *
 * Ids are 1, 2, … in the order of `actors` unless an entry gives its own.
 */

import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { DOMAIN_HEADER_BYTES, MAX_DOMAIN_BYTES, MIN_REGION_BYTES } from '../../../dmo/layout.ts';
import { ConfigError } from '../../../errors.ts';
import { type ActorId, isValidActorId, MAX_ACTOR_ID } from '../../../ids.ts';
import type { Domain } from '../../../sched/types.ts';
import type { CatalogEntry } from '../node/actor-catalog.ts';
import { LIVE_SCHEDULER_DEFAULTS, type LiveNodeOptions, type PeerEndpoint } from '../node/live-node.ts';

const nodeSchema = z.strictObject({
  id: z.number().int().min(0).max(0xffff),
  address: z.string().min(1),
  port: z.number().int().min(1).max(65_535),
  nicCores: z.number().int().min(1).max(64).optional(),
  hostCores: z.number().int().min(1).max(64).optional(),
  /** false: the scheduler never migrates on this node (a host-only baseline stays on the host). */
  migration: z.boolean().optional(),
  /**
   * The largest datagram this node sends or takes (default the wire's 1472, one Ethernet MTU).
   * Applications whose actors send large messages between nodes (RKV's catch-up and snapshot
   * chunks) raise it; on loopback a datagram may be up to 65 507 bytes.
   */
  maxFrameBytes: z.number().int().min(512).max(65_507).optional(),
  /**
   * Actor regions in each of this node's DMO domains (default LiveNode's 32). Every actor placed on
   * the node must fit its host domain (a NIC actor may migrate there), so a node with more actors
   * raises it; each domain is one SharedArrayBuffer of maxActors × regionBytes.
   */
  maxActors: z.number().int().min(1).max(4096).optional(),
  /** Bytes of each actor region (default LiveNode's 4 MiB): a multiple of 16, at least 1 KiB. */
  regionBytes: z
    .number()
    .int()
    .min(MIN_REGION_BYTES)
    .refine((bytes) => bytes % 16 === 0, 'regionBytes must be a multiple of 16')
    .optional(),
});

/** LiveNode's defaults, which a node without `maxActors` / `regionBytes` in the file gets. */
export const DEFAULT_NODE_MAX_ACTORS = 32;
export const DEFAULT_NODE_REGION_BYTES = 4 * 1024 * 1024;

const ACTOR_ID_RANGE =
  `an actor id is an integer in [1, ${MAX_ACTOR_ID}] (0 is no actor; an object id holds its owner's in 21 bits): ` +
  'give one in that range, or leave "id" out to number the actors 1, 2, … in file order';

const actorSchema = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'an instance name: lower case, digits and dashes'),
  module: z.string().min(1),
  exportName: z.string().min(1),
  node: z.number().int().min(0).max(0xffff),
  // Bounded here rather than where the catalog is built: an id above MAX_ACTOR_ID passed the schema
  // and then failed at start-up as a bare RangeError (exit 3, a stack) instead of a config error.
  id: z.number().int().min(1, ACTOR_ID_RANGE).max(MAX_ACTOR_ID, ACTOR_ID_RANGE).optional(),
  domain: z.enum(['nic', 'host']).optional(),
});

const clusterSchema = z.strictObject({
  schemaVersion: z.literal(1),
  nodes: z.array(nodeSchema).min(1),
  actors: z.array(actorSchema).min(1),
});

export type ClusterNodeSpec = z.infer<typeof nodeSchema>;
export type ClusterActorSpec = z.infer<typeof actorSchema>;
export type ClusterSpec = z.infer<typeof clusterSchema>;

/**
 * Validates a cluster document: the schema, unique node ids and addresses, unique actor names
 * and ids, every actor on a listed node. Relative module paths resolve against `baseDir`.
 */
export function parseClusterSpec(value: unknown, baseDir = process.cwd()): ClusterSpec {
  const parsed = clusterSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') ?? '';
    throw new ConfigError(`cluster${path ? `.${path}` : ''}`, issue?.message ?? 'invalid cluster file');
  }
  const spec = parsed.data;
  const nodeIds = new Set<number>();
  const endpoints = new Set<string>();
  for (const node of spec.nodes) {
    if (nodeIds.has(node.id)) throw new ConfigError('cluster.nodes', `node id ${node.id} appears twice`);
    const endpoint = `${node.address}:${node.port}`;
    if (endpoints.has(endpoint)) throw new ConfigError('cluster.nodes', `two nodes listen on ${endpoint}`);
    nodeIds.add(node.id);
    endpoints.add(endpoint);
    const maxActors = node.maxActors ?? DEFAULT_NODE_MAX_ACTORS;
    const regionBytes = node.regionBytes ?? DEFAULT_NODE_REGION_BYTES;
    if (DOMAIN_HEADER_BYTES + maxActors * regionBytes > MAX_DOMAIN_BYTES) {
      throw new ConfigError(
        `cluster.nodes.${node.id}`,
        `node ${node.id}: ${maxActors} regions (maxActors) of ${regionBytes} bytes (regionBytes) exceed the 4 GiB ` +
          'a DMO domain can address: lower regionBytes or maxActors',
      );
    }
  }
  const names = new Set<string>();
  const ids = new Set<number>();
  const actors = spec.actors.map((actor, index) => {
    const id = actor.id ?? index + 1;
    if (names.has(actor.name))
      throw new ConfigError('cluster.actors', `actor name "${actor.name}" appears twice`);
    if (ids.has(id)) throw new ConfigError('cluster.actors', `actor id ${id} appears twice`);
    if (!nodeIds.has(actor.node)) {
      throw new ConfigError(
        `cluster.actors.${index}.node`,
        `actor "${actor.name}" is placed on node ${actor.node}, which the file does not list`,
      );
    }
    names.add(actor.name);
    ids.add(id);
    return { ...actor, id, module: isAbsolute(actor.module) ? actor.module : resolve(baseDir, actor.module) };
  });
  for (const node of spec.nodes) {
    // Checked here rather than when the node's domain runs out mid-start: every actor of a node may
    // end up in its host domain, so all of them need a region there.
    const placed = actors.filter((actor) => actor.node === node.id).length;
    const maxActors = node.maxActors ?? DEFAULT_NODE_MAX_ACTORS;
    if (placed > maxActors) {
      throw new ConfigError(
        `cluster.nodes.${node.id}.maxActors`,
        `node ${node.id} runs ${placed} actors but its DMO domains hold ${maxActors} actor regions each` +
          `${node.maxActors === undefined ? ' (the default)' : ''}: set "maxActors" on the node to at least ${placed}`,
      );
    }
  }
  return { ...spec, actors };
}

/** Reads and validates a cluster file (module paths relative to the file). */
export function readClusterFile(path: string): ClusterSpec {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('cluster', `cannot read ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('cluster', `${path} is not JSON: ${(error as Error).message}`);
  }
  return parseClusterSpec(json, resolve(path, '..'));
}

/** The options node `nodeId` of the cluster starts with (its own port, its peers, the catalog). */
export function nodeOptionsFor(
  spec: ClusterSpec,
  nodeId: number,
): Pick<
  LiveNodeOptions,
  | 'catalog'
  | 'nodeId'
  | 'peers'
  | 'port'
  | 'address'
  | 'placement'
  | 'scheduler'
  | 'maxFrameBytes'
  | 'ringBytes'
  | 'maxActors'
  | 'regionBytes'
> & {
  readonly nicCores?: number;
  readonly hostCores?: number;
} {
  const self = spec.nodes.find((node) => node.id === nodeId);
  if (self === undefined) {
    throw new ConfigError(
      'nodeId',
      `node ${nodeId} is not in the cluster file (it lists ${spec.nodes.map((n) => n.id).join(', ')})`,
    );
  }
  const catalog: CatalogEntry[] = spec.actors.map((actor, index) => ({
    id: catalogId(actor.id, index),
    name: actor.name,
    module: actor.module,
    exportName: actor.exportName,
    node: actor.node,
  }));
  const peers: Record<number, PeerEndpoint> = {};
  for (const node of spec.nodes)
    if (node.id !== nodeId) peers[node.id] = { address: node.address, port: node.port };
  const placement: Record<string, Domain> = {};
  for (const actor of spec.actors)
    if (actor.node === nodeId && actor.domain) placement[actor.name] = actor.domain;
  return {
    catalog,
    nodeId,
    peers,
    port: self.port,
    address: self.address,
    placement,
    ...(self.migration === false ? { scheduler: { enableMigration: false } } : {}),
    ...(self.nicCores === undefined ? {} : { nicCores: self.nicCores }),
    ...(self.hostCores === undefined ? {} : { hostCores: self.hostCores }),
    ...(self.maxActors === undefined ? {} : { maxActors: self.maxActors }),
    ...(self.regionBytes === undefined ? {} : { regionBytes: self.regionBytes }),
    ...(self.maxFrameBytes === undefined
      ? {}
      : { maxFrameBytes: self.maxFrameBytes, ringBytes: ringBytesFor(self.maxFrameBytes) }),
  };
}

/**
 * An actor's id for the catalog. parseClusterSpec has checked it; a spec built in code has not, and
 * gets the same ConfigError rather than ids.ts's RangeError.
 */
function catalogId(id: number | undefined, index: number): ActorId {
  const value = id ?? index + 1;
  if (!isValidActorId(value) || value === 0)
    throw new ConfigError(`cluster.actors.${index}.id`, `${ACTOR_ID_RANGE}, got ${value}`);
  return value;
}

/**
 * Core rings big enough for a full queue of the largest frames (LiveNode's rule: 2 × queue depth
 * × (frame + 256)), as a power of two, never below the default 2 MiB.
 */
function ringBytesFor(maxFrameBytes: number): number {
  const depth = LIVE_SCHEDULER_DEFAULTS.coreQueueDepth ?? 1;
  let bytes = 1 << 21;
  while (bytes < 2 * depth * (maxFrameBytes + 256)) bytes *= 2;
  return bytes;
}
