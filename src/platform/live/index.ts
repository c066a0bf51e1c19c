/**
 * The live platform (`ipipe/live`): a node that serves real UDP clients with worker threads as
 * NIC and host cores, shared-memory rings (or TCP, for a NIC domain on a DPU) as the NIC↔host
 * channel, and the paper's four-phase migration; plus the client library, the load generator and
 * the admin endpoint. Value exports first, then type exports.
 */

export type { MessageChannel } from './channel/channel.ts';
export { createSharedChannelPair, SharedChannelEndpoint } from './channel/channel.ts';
export { connectTcpChannel, listenTcpChannel } from './channel/tcp-channel.ts';
export type { ClusterActorSpec, ClusterNodeSpec, ClusterSpec } from './cluster/cluster-file.ts';
/** Cluster files (which node hosts which actor) and one process per node on this machine. */
export { nodeOptionsFor, parseClusterSpec, readClusterFile } from './cluster/cluster-file.ts';
export type { ClusterNodeProcess, LaunchOptions, NodeBanner } from './cluster/launch.ts';
export { ClusterStartError, LocalCluster } from './cluster/launch.ts';
export type { ClientOptions } from './net/client.ts';
export { IpipeClient } from './net/client.ts';
export { isNetError, NetError, RemoteError, RequestTimeoutError } from './net/errors.ts';
export type { LoadMode, LoadOptions, LoadResult } from './net/load.ts';
export { runLoad } from './net/load.ts';
export type { AdminServer, NodeMetrics } from './node/admin-server.ts';
export { nodeMetrics, startAdminServer } from './node/admin-server.ts';
export type { LiveMigrationRecord, LiveNodeOptions, LiveNodeStats, PeerEndpoint } from './node/live-node.ts';
export {
  LIVE_SCHEDULER_DEFAULTS,
  LiveNode,
  startHostDomain,
  startNicDomain,
} from './node/live-node.ts';
