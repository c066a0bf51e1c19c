/**
 * A UDP port free right now on loopback (bound and released; a node binds it a moment later — a
 * tiny race, fine on a test machine). Shared by the tests that start live nodes on chosen ports.
 */

import dgram from 'node:dgram';

export async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}
