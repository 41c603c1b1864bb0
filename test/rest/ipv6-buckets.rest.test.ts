// Issue 28 item 6 (docs/operations.md "Client addresses and rate limits"): per-IP buckets count an
// IPv6 client by its /64 (CAIRN_IPV6_PREFIX), and an IPv4-mapped address as the IPv4 address it
// carries. Every per-IP bucket goes through the one keying function: the edge bucket, a plain
// Express route's bucket (POST /oauth/register), a procedure's (approval lookups) and the password
// bucket. Clients are set with X-Forwarded-For from a trusted loopback proxy; the apps run at
// the spec's budgets (factor 1) on the manual clock.
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { call, registerUser, type Res } from '../helpers/http.js';
import { ConfigError, loadConfig } from '../../core/config.js';
import { ipBucketKey } from '../../routers/middleware/rate-limit.js';

const apps: TestApp[] = [];
afterEach(async () => {
  while (apps.length) await apps.pop()!.close();
});

async function proxied(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await startApp({ CAIRN_RATE_LIMIT_FACTOR: '1', CAIRN_TRUST_PROXY: 'loopback', ...env });
  apps.push(a);
  return a;
}

const from = (app: TestApp, ip: string, method: string, path: string, opts: Parameters<typeof call>[3] = {}): Promise<Res> =>
  call(app, method, path, { ...opts, headers: { ...(opts.headers ?? {}), 'x-forwarded-for': ip } });

/** Spends the edge bucket (burst 100) of `ips`' network, one request per address in turn. */
async function spendEdge(app: TestApp, ips: (i: number) => string): Promise<void> {
  for (let i = 0; i < 100; i++) expect((await from(app, ips(i), 'GET', '/healthz')).status, `request ${i}`).toBe(200);
}

describe('per-IP buckets key IPv6 by /64 (issue 28 item 6)', () => {
  it('the edge bucket: 100 addresses of one /64 share one budget; another /64 has its own', async () => {
    const app = await proxied();
    await spendEdge(app, (i) => `2001:db8:1:2::${(i + 1).toString(16)}`);
    const same = await from(app, '2001:db8:1:2:ffff:ffff:ffff:fffe', 'GET', '/healthz');
    expect(same.status).toBe(429);
    expect(same.headers.get('ratelimit-remaining')).toBe('0');
    expect((await from(app, '2001:DB8:1:2:0:0:0:1', 'GET', '/healthz')).status).toBe(429); // another spelling, same /64
    const other = await from(app, '2001:db8:1:3::1', 'GET', '/healthz');
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('99');
  });

  it('an IPv4-mapped IPv6 address is its IPv4 address: one bucket however the client arrived', async () => {
    const app = await proxied();
    await spendEdge(app, (i) => (i % 2 ? '203.0.113.7' : '::ffff:203.0.113.7'));
    expect((await from(app, '::FFFF:cb00:7107', 'GET', '/healthz')).status).toBe(429);
    expect((await from(app, '203.0.113.7', 'GET', '/healthz')).status).toBe(429);
    expect((await from(app, '203.0.113.8', 'GET', '/healthz')).status).toBe(200); // IPv4 stays per address
  });

  it('a plain route bucket (POST /oauth/register, 10 an hour) counts the /64', async () => {
    const app = await proxied();
    const register = (ip: string) => from(app, ip, 'POST', '/oauth/register', { body: { client_name: 'Probe', redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' } });
    for (let i = 0; i < 10; i++) expect((await register(`2001:db8:a:b::${i + 1}`)).status, `register ${i}`).toBe(201);
    expect((await register('2001:db8:a:b:1234::1')).status).toBe(429);
    expect((await register('2001:db8:a:c::1')).status).toBe(201);
  });

  it('a procedure bucket (approval lookups, 30 a minute per IP) counts the /64', async () => {
    const app = await proxied();
    const users = await Promise.all(Array.from({ length: 4 }, () => registerUser(app)));
    let n = 0;
    // Four users, at most 8 each (their own bucket is 10), from 30 addresses of one /64.
    for (const u of users) for (let i = 0; i < 8 && n < 30; i++, n++) expect((await from(app, `2001:db8:5:6::${n + 1}`, 'GET', '/v1/approvals/123456789', { token: u.session })).status).toBe(404);
    const fifth = await registerUser(app);
    expect((await from(app, '2001:db8:5:6:ffff::1', 'GET', '/v1/approvals/123456789', { token: fifth.session })).status).toBe(429);
    expect((await from(app, '2001:db8:5:7::1', 'GET', '/v1/approvals/123456789', { token: fifth.session })).status).toBe(404);
  });

  it('the password bucket (20 hashes per 5 minutes per IP) counts the /64', async () => {
    const app = await proxied();
    const login = (ip: string, i: number) => from(app, ip, 'POST', '/v1/auth/login', { body: { email: `nobody${i}@example.test`, password: 'not the password' } });
    for (let i = 0; i < 20; i++) expect((await login(`2001:db8:9:9::${i + 1}`, i)).status, `login ${i}`).toBe(401);
    expect((await login('2001:db8:9:9:abcd::1', 20)).status).toBe(429);
    expect((await login('2001:db8:9:a::1', 21)).status).toBe(401);
  });
});

describe('CAIRN_IPV6_PREFIX', () => {
  it('48: the whole /48 shares a bucket; 128: every address has its own', async () => {
    const wide = await proxied({ CAIRN_IPV6_PREFIX: '48' });
    await spendEdge(wide, (i) => `2001:db8:7:${i.toString(16)}::1`);
    expect((await from(wide, '2001:db8:7:ffff::1', 'GET', '/healthz')).status).toBe(429);
    expect((await from(wide, '2001:db8:8::1', 'GET', '/healthz')).status).toBe(200);

    const each = await proxied({ CAIRN_IPV6_PREFIX: '128' });
    await spendEdge(each, () => '2001:db8:1:2::1');
    expect((await from(each, '2001:db8:1:2::1', 'GET', '/healthz')).status).toBe(429);
    expect((await from(each, '2001:db8:1:2::2', 'GET', '/healthz')).status).toBe(200);
  });

  it('defaults to 64; takes 1..128 and refuses anything else at start', () => {
    expect(loadConfig({}).ipv6Prefix).toBe(64);
    expect(loadConfig({ CAIRN_IPV6_PREFIX: '56' }).ipv6Prefix).toBe(56);
    for (const bad of ['0', '129', '64.5', 'wide', '-1']) expect(() => loadConfig({ CAIRN_IPV6_PREFIX: bad }), bad).toThrow(ConfigError);
  });

  it('keys: one per network whatever the spelling; IPv4 and non-addresses as they are', () => {
    for (const ip of ['2001:db8:1:2::1', '2001:DB8:1:2:0:0:0:1', '2001:0db8:0001:0002:ffff:ffff:ffff:ffff', '2001:db8:1:2::1.2.3.4', 'fe80::1%eth0'.replace('fe80', '2001:db8:1:2')]) {
      expect(ipBucketKey(ip, 64), ip).toBe('2001:db8:1:2::/64');
    }
    expect(ipBucketKey('2001:db8:1:2::1', 48)).toBe('2001:db8:1::/48');
    expect(ipBucketKey('2001:db8:1:2::1', 56)).toBe(ipBucketKey('2001:db8:1:ff::1', 56));
    expect(ipBucketKey('2001:db8:1:2::1', 56)).not.toBe(ipBucketKey('2001:db8:1:100::1', 56));
    expect(ipBucketKey('2001:db8:1:2::1', 128)).not.toBe(ipBucketKey('2001:db8:1:2::2', 128));
    expect(ipBucketKey('::ffff:198.51.100.4', 64)).toBe('198.51.100.4');
    expect(ipBucketKey('::ffff:c633:6404', 64)).toBe('198.51.100.4');
    expect(ipBucketKey('198.51.100.4', 64)).toBe('198.51.100.4');
    expect(ipBucketKey('::1', 64)).toBe(ipBucketKey('::2', 64));
    expect(ipBucketKey('not an address', 64)).toBe('not an address');
    expect(ipBucketKey('', 64)).toBe('');
  });
});
