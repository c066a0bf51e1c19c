/** One free UDP port on loopback (src's freeUdpPorts), for the tests that start live nodes. */

import { freeUdpPorts } from '../../../src/platform/live/cluster/free-ports.ts';

export async function freeUdpPort(): Promise<number> {
  return (await freeUdpPorts(1))[0] as number;
}
