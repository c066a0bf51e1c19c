import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError, isIpipeError } from '../../src/errors.ts';
import {
  getHostProfile,
  getNicProfile,
  getProfile,
  hostOf,
  knownProfileNames,
  loadProfileFile,
  parseProfile,
} from '../../src/hw/load-profile.ts';
import { coresForLineRate } from '../../src/hw/models/forwarding.ts';
import { BUILTIN_PROFILES, HOST_PROFILE_NAMES, NIC_PROFILE_NAMES } from '../../src/hw/profiles.ts';
import { hardwareProfileSchema } from '../../src/hw/schema.ts';

const directory = mkdtempSync(join(tmpdir(), 'ipipe-hw-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function writeJson(name: string, value: unknown): string {
  const file = join(directory, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

test('every built-in profile validates against its schema, is deeply frozen, and each NIC names its host', () => {
  assert.deepEqual(new Set(knownProfileNames()), new Set([...NIC_PROFILE_NAMES, ...HOST_PROFILE_NAMES]));
  for (const [name, profile] of Object.entries(BUILTIN_PROFILES)) {
    assert.equal(profile.name, name);
    assert.ok(hardwareProfileSchema.safeParse(profile).success, `${name} fails its schema`);
    assert.ok(Object.isFrozen(profile) && Object.isFrozen(profile.memory.latencyNs), `${name} not frozen`);
  }
  for (const name of NIC_PROFILE_NAMES) {
    const nic = getNicProfile(name);
    assert.equal(hostOf(nic).kind, 'host');
  }
  assert.equal(getNicProfile('liquidio-cn2350').host, 'xeon-e5-2680v3');
  assert.equal(getNicProfile('bluefield-1m332a').host, 'xeon-e5-2620v4');
  assert.equal(getNicProfile('stingray-ps225').host, 'xeon-e5-2620v4');
  assert.throws(() => {
    (getNicProfile('liquidio-cn2350').cores as { count: number }).count = 99;
  }, TypeError);
});

test('specs as published: placement, host path, cores, clocks, links', () => {
  const cn2350 = getNicProfile('liquidio-cn2350');
  assert.equal(cn2350.placement, 'on-path');
  assert.equal(cn2350.dispatch.kind, 'traffic-manager');
  assert.equal(cn2350.hostPath.kind, 'native-dma');
  assert.deepEqual([cn2350.cores.count, cn2350.cores.ghz, cn2350.link.linkGbps], [12, 1.2, 10]);
  const stingray = getNicProfile('stingray-ps225');
  assert.equal(stingray.placement, 'off-path');
  assert.equal(stingray.dispatch.kind, 'software-dispatcher');
  assert.deepEqual([stingray.cores.count, stingray.cores.ghz, stingray.link.linkGbps], [8, 3.0, 25]);
  assert.equal(getNicProfile('liquidio-cn2360').forwarding.provenance, 'extrapolated');
  assert.equal(getNicProfile('bluefield-1m332a').forwarding.provenance, 'extrapolated');
  assert.equal(getHostProfile('xeon-e5-2680v3').memory.latencyNs.l3, 22.4);
});

test('an unknown profile name is a ConfigError that lists the known names', () => {
  assert.throws(
    () => getProfile('bluefield-3'),
    (error: unknown) =>
      isIpipeError(error, 'IPIPE_ERR_CONFIG_INVALID') &&
      NIC_PROFILE_NAMES.every((name) => (error as Error).message.includes(name)) &&
      (error as Error).message.includes('xeon-e5-2680v3'),
  );
  assert.throws(() => getNicProfile('xeon-e5-2680v3'), /is a host, not a NIC/);
  assert.throws(() => getHostProfile('stingray-ps225'), /is a NIC, not a host/);
  assert.throws(() => getProfile('toString'), ConfigError);
});

test('a bad user profile reports the failing path and what was expected', () => {
  const file = writeJson('bad.json', {
    extends: 'bluefield-1m332a',
    name: 'bf2',
    forwarding: { computeBaseNs: 'fast' },
  });
  assert.throws(
    () => loadProfileFile(file),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.code === 'IPIPE_ERR_CONFIG_INVALID' &&
      error.path === 'forwarding.computeBaseNs' &&
      /forwarding\.computeBaseNs: expected number, received string/.test(error.message),
  );
});

test('a user profile is checked deeply: array entries, curve lengths, misspelt keys, kinds', () => {
  const cases: [unknown, string][] = [
    [
      {
        extends: 'stingray-ps225',
        name: 'x',
        forwarding: { ioIntervalNs: { sizesBytes: [64, 128], values: [200, 'y'] } },
      },
      'forwarding.ioIntervalNs.values[1]',
    ],
    [
      {
        extends: 'stingray-ps225',
        name: 'x',
        forwarding: { ioIntervalNs: { sizesBytes: [64, 128], values: [200] } },
      },
      'forwarding.ioIntervalNs.values',
    ],
    [{ extends: 'stingray-ps225', name: 'x', link: { linkGbsp: 100 } }, 'link'],
    [{ extends: 'stingray-ps225', name: 'x', cores: { count: 0 } }, 'cores.count'],
    [{ extends: 'stingray-ps225', name: 'x', placement: 'sideways' }, 'placement'],
    [{ extends: 'nope' }, 'extends'],
    [{ extends: 'liquidio-cn2350', name: 'x', placement: 'off-path' }, 'dispatch.kind'],
    [{ extends: 'bluefield-1m332a', name: 'x', cores: { count: 1 } }, 'cores.count'],
  ];
  for (const [value, path] of cases) {
    assert.throws(
      () => parseProfile(value, 'test.json'),
      (error: unknown) => error instanceof ConfigError && error.path === path,
      `expected a ConfigError at ${path}`,
    );
  }
  assert.throws(() => loadProfileFile(join(directory, 'missing.json')), /cannot read profile file/);
  assert.throws(() => loadProfileFile(writeJson('broken.json', '{ "kind": ')), /not valid JSON/);
});

test('a valid user profile file loads, frozen, and the models use its numbers', () => {
  // Someone's BlueField-2: 8 A72 cores at 2.5 GHz, 100 GbE, faster receive path.
  const file = writeJson('bluefield2.json', {
    extends: 'bluefield-1m332a',
    name: 'bluefield2-mine',
    description: 'BlueField-2 measured in our lab',
    cores: { ghz: 2.5 },
    link: { linkGbps: 100 },
    forwarding: {
      provenance: 'fitted',
      source: 'our own echo sweep',
      ioIntervalNs: { sizesBytes: [64, 1500], values: [150, 180] },
    },
  });
  const profile = loadProfileFile(file);
  assert.equal(profile.kind, 'nic');
  if (profile.kind !== 'nic') return;
  assert.equal(profile.name, 'bluefield2-mine');
  assert.equal(profile.cores.ghz, 2.5);
  assert.equal(profile.cores.count, 8, 'unchanged fields come from the base');
  assert.equal(profile.link.linkGbps, 100);
  assert.ok(Object.isFrozen(profile.forwarding.ioIntervalNs.values));
  assert.notEqual(coresForLineRate(profile, 1500), coresForLineRate(getNicProfile('bluefield-1m332a'), 1500));
  // A complete profile without `extends` loads too.
  const full = writeJson('full.json', {
    ...structuredClone(getHostProfile('xeon-e5-2620v4')),
    name: 'my-host',
  });
  assert.equal(loadProfileFile(full).name, 'my-host');
});

test('every built-in survives JSON: printed whole (ipipe profiles <name>) it parses back to itself', () => {
  for (const name of knownProfileNames()) {
    const builtIn = getProfile(name);
    assert.deepEqual(parseProfile(JSON.parse(JSON.stringify(builtIn)), `${name}.json`), builtIn, name);
  }
  // One-core on-path cards are fine (no dispatcher core): the 2-core rule is the off-path one's.
  assert.equal(parseProfile({ extends: 'liquidio-cn2350', name: 'x', cores: { count: 1 } }).cores.count, 1);
});

test('a profile file saved with a UTF-8 byte-order mark (as some Windows editors do) loads', () => {
  const file = writeJson(
    'with-bom.json',
    `\uFEFF${JSON.stringify({ extends: 'stingray-ps225', name: 'bom-card' })}`,
  );
  assert.equal(loadProfileFile(file).name, 'bom-card');
});
