/**
 * The node's request-latency summary (ipipe_request_latency_seconds): quantiles from what was
 * recorded in the last window, `_sum`/`_count` since the start, prom-client's text format.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import client from 'prom-client';
import { actorId } from '../../../../src/ids.ts';
import { ActorLatencySummary } from '../../../../src/platform/live/node/latency-summary.ts';

function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** A summary over actors 1 (`echo`) and 2 (`kv`), in a registry of its own. */
function echoAndKv(): { registry: client.Registry; summary: ActorLatencySummary } {
  const registry = new client.Registry();
  const names = new Map([
    [actorId(1), 'echo'],
    [actorId(2), 'kv'],
  ]);
  return { registry, summary: new ActorLatencySummary(registry, (id) => names.get(id) ?? String(id)) };
}

test('quantiles, sum and count per actor, in the Prometheus summary format', async () => {
  const { registry, summary } = echoAndKv();
  try {
    // echo: 1..1000 µs, once each; kv: 10 ms, 100 times.
    for (let us = 1; us <= 1000; us++) summary.record(actorId(1), us / 1e6);
    for (let i = 0; i < 100; i++) summary.record(actorId(2), 0.01);
    const text = await registry.metrics();
    assert.match(text, /# TYPE ipipe_request_latency_seconds summary/);
    const near = (actual: number | undefined, expected: number) =>
      assert.ok(
        actual !== undefined && Math.abs(actual - expected) <= expected * 0.01,
        `${actual} ≈ ${expected}`,
      );
    near(sample(text, 'ipipe_request_latency_seconds', 'quantile="0.5",actor="echo"'), 500e-6);
    near(sample(text, 'ipipe_request_latency_seconds', 'quantile="0.99",actor="echo"'), 990e-6);
    near(sample(text, 'ipipe_request_latency_seconds', 'quantile="0.999",actor="echo"'), 999e-6);
    near(sample(text, 'ipipe_request_latency_seconds', 'quantile="0.9",actor="kv"'), 0.01);
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), 1000);
    near(sample(text, 'ipipe_request_latency_seconds_sum', 'actor="echo"'), 0.5005);
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="kv"'), 100);
  } finally {
    summary.close();
  }
});

test('the quantiles cover the last window; sum and count keep everything', async () => {
  const registry = new client.Registry();
  const summary = new ActorLatencySummary(registry, () => 'echo');
  try {
    for (let i = 0; i < 50; i++) summary.record(actorId(1), 0.002);
    // Four rotations later the old values are still in the window (the oldest bucket)...
    for (let r = 0; r < 4; r++) summary.rotate();
    summary.record(actorId(1), 0.0001);
    let text = await registry.metrics();
    assert.ok((sample(text, 'ipipe_request_latency_seconds', 'quantile="0.5",actor="echo"') ?? 0) > 0.0019);
    // ...one more and they have aged out: only the newer value is left.
    summary.rotate();
    text = await registry.metrics();
    const p50 = sample(text, 'ipipe_request_latency_seconds', 'quantile="0.5",actor="echo"') ?? 0;
    assert.ok(Math.abs(p50 - 0.0001) <= 0.0001 * 0.01, `p50 ${p50}`);
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), 51);
    // A value past the histogram's range is counted at its limit, not thrown on.
    summary.record(actorId(1), 3600);
    text = await registry.metrics();
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), 52);
    assert.ok((sample(text, 'ipipe_request_latency_seconds', 'quantile="0.999",actor="echo"') ?? 0) >= 59);
  } finally {
    summary.close();
  }
});

test('reset forgets everything; remove drops one actor', async () => {
  const { registry, summary } = echoAndKv();
  try {
    summary.record(actorId(1), 0.001);
    summary.record(actorId(2), 0.002);
    summary.remove('kv');
    let text = await registry.metrics();
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), 1);
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="kv"'), undefined);
    registry.resetMetrics();
    text = await registry.metrics();
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), undefined);
    summary.record(actorId(1), 0.003);
    text = await registry.metrics();
    assert.equal(sample(text, 'ipipe_request_latency_seconds_count', 'actor="echo"'), 1);
  } finally {
    summary.close();
  }
});
