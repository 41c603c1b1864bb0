// Issue 15, docs/security.md "The outbound door": the SSRF corpus. Every refused case runs in a
// child process inside a network namespace whose only interface is loopback (`unshare -rn`), with
// the private and "public" test addresses added to that loopback, so a broken door could reach
// nothing beyond this machine, and a listener on those addresses sees any connection that got
// through. The child (test/net/refused-cases.ts) prints its results as JSON.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

// Addresses added to the namespace's loopback: refused ones (so a connection to them would arrive
// and be counted) and two "public" ones for the controls. None of this leaves the namespace.
const NS_ADDRESSES = [
  '10.0.0.1/32', '172.16.0.1/32', '192.168.1.1/32', '169.254.169.254/32', '100.64.0.1/32', '192.0.2.1/32',
  '198.18.0.1/32', '240.0.0.1/32', '93.184.216.34/32', 'fd00::1/128', 'fe80::1/128', '2001:db8::1/128',
  '2606:4700::1/128', '64:ff9b::a00:1/128', '2002:a00:1::1/128', '2001:0:4136:e378:8000:63bf:f5ff:fffe/128',
];

type Arrival = { local: string; port: number };
type Attempt = { hostname: string; address: string; port: number };
type Result = { name: string; reason: string | null; status: number | null; arrivals: Arrival[]; attempts: Attempt[]; redirectorHits: number };
type Output = {
  results: Result[];
  controls: Result[];
  linkTitle: { name: string; status: number; title: string | null; arrivals: Arrival[]; attempts: Attempt[] }[];
};

let out: Output;

beforeAll(() => {
  const script = [
    'ip link set lo up',
    ...NS_ADDRESSES.map((a) => `ip addr add ${a} dev lo`),
    `exec ${JSON.stringify(process.execPath)} --import tsx test/net/refused-cases.ts`,
  ].join(' && ');
  const child = spawnSync('unshare', ['-rn', 'sh', '-c', script], { cwd: root, encoding: 'utf8', timeout: 120_000, env: { ...process.env, LOG_LEVEL: 'silent' } });
  if (child.error || child.status !== 0) {
    // Never skip: without the namespace these cases must not run at all, and CI runs as root.
    throw new Error(
      `the SSRF corpus needs a loopback-only network namespace (unshare -rn, ip) and could not get one, or its script failed: ` +
        `status ${child.status}, ${child.error?.message ?? ''}\n${child.stderr}`,
    );
  }
  out = JSON.parse(child.stdout) as Output;
}, 150_000);

describe('the outbound door refuses every non-public address (SSRF corpus)', () => {
  it('runs at least 30 refused cases', () => {
    expect(out.results.length).toBeGreaterThanOrEqual(30);
  });

  it('every case is refused as refused_address, no connection reaches a listener, and no socket is handed the address', () => {
    const wrong = out.results.filter((r) => r.reason !== 'refused_address' || r.status !== null || r.arrivals.length || r.attempts.length);
    expect(wrong).toEqual([]);
  });

  it('the redirect cases really went through the loopback redirector first', () => {
    const redirects = out.results.filter((r) => /redirect|rebinding/.test(r.name));
    expect(redirects.length).toBeGreaterThanOrEqual(9);
    for (const r of redirects) expect(r.redirectorHits, r.name).toBeGreaterThanOrEqual(1);
    const direct = out.results.filter((r) => !/redirect|rebinding/.test(r.name));
    for (const r of direct) expect(r.redirectorHits, r.name).toBe(0);
  });

  it('the instruments see allowed connections (loopback when allowed, public names and literals)', () => {
    for (const c of out.controls) {
      expect(c.reason === null || c.reason === 'network', c.name).toBe(true); // the sentinel closes at once
      expect(c.arrivals.length, c.name).toBe(1);
      expect(c.attempts.length, c.name).toBeGreaterThanOrEqual(1);
    }
    expect(out.controls.map((c) => c.arrivals[0]!.local)).toEqual(['::ffff:127.0.0.1', '::ffff:93.184.216.34', '2606:4700::1', '::ffff:93.184.216.34']);
  });

  it('POST /v1/link-title gives title null for private targets and redirects to them, with no connection to them', () => {
    const [control, ...refused] = out.linkTitle;
    expect(control).toMatchObject({ status: 200, title: 'Loopback page' });
    expect(refused.length).toBeGreaterThanOrEqual(5);
    for (const r of refused) expect(r, r.name).toMatchObject({ status: 200, title: null, arrivals: [], attempts: [] });
  });
});
