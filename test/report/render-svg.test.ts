/**
 * renderSvg, the vega boundary: clip-path and gradient ids (process-wide counters inside vega) are
 * renumbered so repeated renders are byte-identical and different charts never share ids; external
 * data is refused rather than read; warnings go to the caller's callback; a spec that does not
 * compile is a ConfigError.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isIpipeError } from '../../src/errors.ts';
import { normaliseSvgIds, renderSvg, type VegaLiteSpec } from '../../src/report/index.ts';

/** A line clipped to a domain narrower than its data: vega emits a clipPath with a counter id. */
function clippedLine(title: string): VegaLiteSpec {
  return {
    title,
    data: {
      values: [
        { x: 1, y: 1 },
        { x: 2, y: 5 },
      ],
    },
    mark: { type: 'line', clip: true },
    encoding: {
      x: { field: 'x', type: 'quantitative', scale: { domain: [0, 1.5] } },
      y: { field: 'y', type: 'quantitative' },
    },
  };
}

function idsOf(svg: string): string[] {
  return [...svg.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1] ?? '');
}

describe('renderSvg', () => {
  it('gives byte-identical SVG for a clipped chart drawn twice, its ids and references renamed', async () => {
    const first = await renderSvg(clippedLine('A'));
    const second = await renderSvg(clippedLine('A'));
    assert.equal(first, second);
    const ids = idsOf(first);
    assert.ok(ids.length > 0, 'the clipped chart has a clip path');
    for (const id of ids) {
      assert.match(id, /^c[0-9a-f]{8}-\d+$/);
      assert.ok(first.includes(`url(#${id})`), `the reference to ${id} follows the rename`);
    }
    assert.ok(!/clip\d|gradient_\d/.test(first), 'no vega counter id is left');
  });

  it('gives different charts different id prefixes, so they can share one HTML page', async () => {
    const a = idsOf(await renderSvg(clippedLine('A')));
    const b = idsOf(await renderSvg(clippedLine('B')));
    assert.ok(a.length > 0 && b.length > 0);
    for (const id of a) assert.ok(!b.includes(id), `${id} appears in both charts`);
  });

  it('refuses a spec that names external data instead of reading it', async () => {
    const warnings: string[] = [];
    await assert.rejects(
      renderSvg(
        {
          data: { url: '/etc/passwd', format: { type: 'csv' } },
          mark: 'point',
          encoding: { x: { field: 'a', type: 'nominal' } },
        },
        { onWarning: (message) => warnings.push(message) },
      ),
      (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') &&
        /inline data only.*\/etc\/passwd/.test(error.message),
    );
    assert.deepEqual(warnings, [], 'a refused chart throws; it does not also warn');
  });

  it("passes vega-lite's warnings to onWarning instead of the console", async () => {
    const warnings: string[] = [];
    const svg = await renderSvg(
      {
        data: { values: [{ x: 1 }] },
        mark: 'bar',
        encoding: { x: { field: 'x', type: 'quantitative' }, shape: { field: 'x', type: 'nominal' } },
      },
      { onWarning: (message) => warnings.push(message) },
    );
    assert.match(svg, /^<svg/);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] ?? '', /shape dropped/);
  });

  it('reports a spec that does not compile as a ConfigError', async () => {
    await assert.rejects(
      renderSvg({ mark: 'nonsense' } as unknown as VegaLiteSpec),
      (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') && /does not compile/.test(error.message),
    );
  });
});

describe('normaliseSvgIds', () => {
  it('renumbers ids in order of appearance and rewrites url() and href references', () => {
    const svg =
      '<svg><defs><clipPath id="clip7"><rect/></clipPath><linearGradient id="gradient_3"/></defs>' +
      '<g clip-path="url(#clip7)"><rect fill="url(#gradient_3)"/><use href="#clip7"/></g></svg>';
    const out = normaliseSvgIds(svg);
    const [clip, gradient] = idsOf(out);
    assert.match(clip ?? '', /-1$/);
    assert.match(gradient ?? '', /-2$/);
    assert.ok(
      out.includes(`url(#${clip})`) && out.includes(`href="#${clip}"`) && out.includes(`url(#${gradient})`),
    );
    // The same drawing with other counter values normalises to the same bytes.
    assert.equal(
      normaliseSvgIds(svg.replaceAll('clip7', 'clip1').replaceAll('gradient_3', 'gradient_0')),
      out,
    );
  });

  it('leaves an SVG without ids untouched', () => {
    const svg = '<svg><rect width="1" height="1"/></svg>';
    assert.equal(normaliseSvgIds(svg), svg);
  });
});
