/**
 * One UDP client per node of a cluster: how an application's driver talks to each actor through
 * the node that hosts it (a client socket is connected to one node).
 */

import { IpipeClient } from '../net/client.ts';
import type { ClusterSpec } from './cluster-file.ts';

/** Connects a client to every node of `spec`; on failure closes those already open. */
export async function connectToNodes(
  spec: ClusterSpec,
  options: { readonly timeoutMs: number; readonly retries: number; readonly maxFrameBytes?: number },
): Promise<Map<number, IpipeClient>> {
  const clients = new Map<number, IpipeClient>();
  try {
    for (const node of spec.nodes) {
      clients.set(
        node.id,
        await IpipeClient.connect({
          host: node.address,
          port: node.port,
          timeoutMs: options.timeoutMs,
          retries: options.retries,
          ...(options.maxFrameBytes === undefined ? {} : { maxFrameBytes: options.maxFrameBytes }),
        }),
      );
    }
  } catch (error) {
    await Promise.all([...clients.values()].map((client) => client.close()));
    throw error;
  }
  return clients;
}
