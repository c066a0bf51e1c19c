/**
 * htmlReport produces one self-contained, script-free document: every text field is escaped
 * (whatever it holds, `<script>` never reaches the page), SVG is inlined only when it is a static
 * chart, tables keep column order and format numbers for reading, and the output is deterministic.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isIpipeError } from '../../src/errors.ts';
import {
  barChart,
  escapeHtml,
  type HtmlReportOptions,
  htmlReport,
  tableHtml,
} from '../../src/report/index.ts';

/** The inverse of escapeHtml, to show escaping loses nothing. */
function unescapeHtml(text: string): string {
  return text
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&');
}

const simpleSvg =
  '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>';

function expectRefused(svg: string, pattern: RegExp): void {
  assert.throws(
    () => htmlReport({ title: 't', sections: [{ heading: 'h', svg }] }),
    (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') &&
      /sections\[0\]\.svg/.test(error.message) &&
      pattern.test(error.message),
  );
}

describe('htmlReport', () => {
  it('builds a complete document with a CSP that forbids scripts and no external references', () => {
    const html = htmlReport({
      title: 'Host-core savings',
      subtitle: 'seed 42, LiquidIO CN2350',
      sections: [{ heading: 'RKV', text: 'First paragraph.\n\nSecond\nline.', svg: simpleSvg }],
    });
    assert.match(html, /^<!doctype html>\n<html lang="en">/);
    assert.match(html, /<\/html>\n$/);
    assert.ok(html.includes('Content-Security-Policy" content="default-src &#39;none&#39;'));
    assert.ok(html.includes('<title>Host-core savings</title>'));
    assert.ok(html.includes('<p class="subtitle">seed 42, LiquidIO CN2350</p>'));
    assert.ok(html.includes('<p>First paragraph.</p>\n<p>Second<br>\nline.</p>'));
    assert.ok(html.includes(`<figure>${simpleSvg}</figure>`));
    assert.ok(!/<script|<link|src="http/i.test(html));
  });

  it('escapes <script> (and every other markup character) in any text field', () => {
    const text = fc.string({ unit: 'binary', maxLength: 20 });
    const hostile = fc.constantFrom(
      '<script>alert(1)</script>',
      '</title><script>x</script>',
      '"><img src=x onerror=alert(1)>',
      "'; --",
      '&lt;script&gt;',
    );
    const field = fc
      .tuple(text, hostile, text)
      .map(([before, attack, after]) => `${before}${attack}${after}`);
    fc.assert(
      fc.property(fc.array(field, { minLength: 8, maxLength: 8 }), (fields) => {
        const [title, subtitle, heading, body, caption, column, cell, other] = fields as [
          string,
          string,
          string,
          string,
          string,
          string,
          string,
          string,
        ];
        const html = htmlReport({
          title,
          subtitle,
          sections: [
            {
              heading,
              text: body,
              table: {
                caption,
                columns: [column, 'n'],
                rows: [{ [column]: cell, n: 1 }, { [column]: other }],
              },
            },
          ],
        });
        assert.ok(!/<script/i.test(html), 'no script tag');
        assert.ok(!/<img/i.test(html), 'no injected tag');
        // Only the page's own tags remain: every '<' starts a tag the report itself writes.
        for (const tag of html.matchAll(/<\/?([a-z0-9!]+)/gi)) {
          assert.ok(
            /^(!doctype|html|head|meta|title|style|body|main|h1|h2|p|br|section|table|caption|thead|tbody|tr|th|td)$/i.test(
              tag[1] ?? '',
            ),
            `unexpected tag <${tag[1]}>`,
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('escapes losslessly', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const escaped = escapeHtml(text);
        assert.ok(!/[<>"']/.test(escaped));
        assert.equal(unescapeHtml(escaped), text);
      }),
    );
  });

  it('inlines a rendered chart and refuses SVG that could run code', async () => {
    const svg = await barChart({
      title: 'Cores',
      x: { field: 'app', title: 'Application' },
      y: { field: 'cores', title: 'Host cores', unit: 'cores' },
      rows: [
        { app: 'RKV onload=alert(1)', cores: 3 },
        { app: 'DT', cores: 2 },
      ],
    });
    // The data label mentions onload= inside a quoted attribute value; that is text, not a handler.
    const html = htmlReport({ title: 'r', sections: [{ heading: 'chart', svg }] });
    assert.ok(html.includes(svg));

    expectRefused('<svg><script>alert(1)</script></svg>', /<script>/);
    expectRefused('<svg><SCRIPT >alert(1)</SCRIPT></svg>', /SCRIPT/);
    expectRefused('<svg onload="alert(1)"></svg>', /event handler/);
    expectRefused('<svg><rect onclick=alert(1) /></svg>', /event handler/);
    expectRefused('<svg><a href="javascript:alert(1)"><text>x</text></a></svg>', /javascript:/);
    expectRefused('<svg><foreignObject><div/></foreignObject></svg>', /foreignObject/);
    expectRefused('<div>not svg</div>', /not an SVG document/);
    expectRefused('<svg><rect/></svg><script>x</script>', /not an SVG document|script/);
  });

  it('drops an XML prolog before inlining', () => {
    const html = htmlReport({
      title: 't',
      sections: [{ heading: 'h', svg: `<?xml version="1.0" encoding="UTF-8"?>\n${simpleSvg}` }],
    });
    assert.ok(!html.includes('<?xml'));
    assert.ok(html.includes(simpleSvg));
  });

  it('renders tables in column order, numbers right-aligned and grouped, missing cells as a dash', () => {
    const table = tableHtml({
      caption: 'Latency',
      rows: [
        { scheduler: 'hybrid', p99Us: 12.345678, requests: 1234567 },
        { scheduler: 'FCFS', p99Us: null, requests: 98765432109876543210n },
      ],
    });
    assert.ok(table.includes('<caption>Latency</caption>'));
    assert.ok(table.includes('<thead><tr><th>scheduler</th><th>p99Us</th><th>requests</th></tr></thead>'));
    assert.ok(
      table.includes('<tr><td>hybrid</td><td class="num">12.35</td><td class="num">1,234,567</td></tr>'),
    );
    assert.ok(
      table.includes(
        '<tr><td>FCFS</td><td class="missing">—</td><td class="num">98,765,432,109,876,543,210</td></tr>',
      ),
    );
    const explicit = tableHtml({
      columns: ['requests', 'scheduler'],
      rows: [{ scheduler: 'x', requests: 1 }],
    });
    assert.ok(explicit.includes('<th>requests</th><th>scheduler</th>'));
    assert.ok(explicit.includes('<td class="num">1</td><td>x</td>'));
  });

  it('is deterministic', () => {
    const options: HtmlReportOptions = {
      title: 'Same',
      sections: [{ heading: 'a', text: 'b', svg: simpleSvg, table: { rows: [{ x: 1.5 }] } }],
    };
    assert.equal(htmlReport(options), htmlReport(structuredClone(options)));
  });
});
