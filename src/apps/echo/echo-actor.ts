/**
 * An echo actor: answers each request with its payload. The smallest thing a node can serve, so
 * serving it measures the runtime itself (UDP in, scheduler, a NIC core, UDP out): `ipipe run
 * examples/echo.ts` with `ipipe load --message echo`, bench/udp.bench.ts, and the showcase's
 * "what the runtime costs" part set it against a bare node:dgram echo.
 */

import { defineActor, field, messages } from '../../actor/index.ts';

export const echo = defineActor({
  name: 'echo',
  messages: messages({ echo: { data: field.bytes({ maxBytes: 8_192 }) } }),
  replies: messages({ echo: { data: field.bytes({ maxBytes: 8_192 }) } }),
  placement: 'any',
  exclusive: false,
  exec(ctx, message) {
    ctx.reply({ type: 'echo', data: message.data });
  },
  cost: () => ({ instructions: 600, ipc: 1.5, mpki: 0.2 }),
});

/**
 * An encoded echo request whose whole message is `totalBytes` long (codec framing included, data
 * bytes 0x5a), so that a node and a protocol-less echo server can be sent messages of one size.
 */
export function echoMessageOfSize(totalBytes: number): Uint8Array {
  const overhead = echo.messages.encode({ type: 'echo', data: new Uint8Array(0) }).length;
  return echo.messages.encode({
    type: 'echo',
    data: new Uint8Array(Math.max(0, totalBytes - overhead)).fill(0x5a),
  });
}
