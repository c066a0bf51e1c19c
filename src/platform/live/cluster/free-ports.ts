/**
 * UDP ports free right now on `host` (each bound and released; a node binds it a moment later — a
 * tiny race, fine on one machine). How a driver picks the ports of a local cluster it is about to
 * launch, since every node's cluster file must name every peer's port.
 */

import { createSocket } from 'node:dgram';

export async function freeUdpPorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, host, resolve));
    ports.push(socket.address().port);
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
  return ports;
}
