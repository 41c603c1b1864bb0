// Run by test/net/door.test.ts inside a network namespace whose only interface is loopback (with
// the private and "public" test addresses below added to it), so even a broken door can reach
// nothing outside this machine. Not a test file itself: it runs every refused case through the
// outbound door and prints the results as JSON on stdout; the test asserts on them.
//
// Instruments: a sentinel listener on [::] (dual stack) at the target ports records every
// connection that arrives, on whichever local address; the door's connect hook records every
// address it hands a socket. A refused case must leave both empty.
import net from 'node:net';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { outboundFetch, OutboundError, type ConnectAttempt, type Resolver } from '../../core/net/index.js';
import { startApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { pageServer, selfSignedCert, html } from '../helpers/tls.js';

type Arrival = { local: string; port: number };
const arrivals: Arrival[] = [];
const attempts: ConnectAttempt[] = [];

async function sentinel(port: number): Promise<number> {
  const server = net.createServer((socket) => {
    arrivals.push({ local: socket.localAddress ?? '?', port: socket.localPort ?? 0 });
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen({ port, host: '::', ipv6Only: false }, resolve));
  server.unref();
  return (server.address() as AddressInfo).port;
}

const P = await sentinel(0);
await sentinel(80);
await sentinel(443);

// Stubbed DNS: each name's full answer.
let rebindCalls = 0;
const NAMES: Record<string, () => { address: string; family: number }[]> = {
  localhost: () => [{ address: '127.0.0.1', family: 4 }],
  'loop.test': () => [{ address: '127.0.0.1', family: 4 }],
  'loop6.test': () => [{ address: '::1', family: 6 }],
  'private.test': () => [{ address: '10.0.0.1', family: 4 }],
  'private192.test': () => [{ address: '192.168.1.1', family: 4 }],
  'metadata.test': () => [{ address: '169.254.169.254', family: 4 }],
  'cgnat.test': () => [{ address: '100.64.0.1', family: 4 }],
  'zero.test': () => [{ address: '0.0.0.0', family: 4 }],
  'mixed.test': () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.1', family: 4 }],
  'mixed-order.test': () => [{ address: '10.0.0.1', family: 4 }, { address: '93.184.216.34', family: 4 }],
  'mixed6.test': () => [{ address: '2606:4700::1', family: 6 }, { address: 'fd00::1', family: 6 }],
  'mixed-loop.test': () => [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }],
  'mapped.test': () => [{ address: '::ffff:127.0.0.1', family: 6 }],
  'mapped-private.test': () => [{ address: '::ffff:10.0.0.1', family: 6 }],
  'nat64.test': () => [{ address: '64:ff9b::a00:1', family: 6 }],
  'sixtofour.test': () => [{ address: '2002:a00:1::1', family: 6 }],
  'teredo.test': () => [{ address: '2001:0:4136:e378:8000:63bf:f5ff:fffe', family: 6 }],
  'ula.test': () => [{ address: 'fd00::1', family: 6 }],
  'linklocal6.test': () => [{ address: 'fe80::1', family: 6 }],
  'public.test': () => [{ address: '93.184.216.34', family: 4 }],
  'public6.test': () => [{ address: '2606:4700::1', family: 6 }],
  // DNS rebinding: loopback for the first question, private for every later one.
  'rebind.test': () => (rebindCalls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.0.0.1', family: 4 }]),
};
const resolver: Resolver = async (name) => {
  const answer = NAMES[name];
  if (!answer) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return answer();
};

// The redirector: a loopback HTTP server answering 302 to whatever /to?u= names.
let redirectorHits = 0;
const redirector = http.createServer((req, res) => {
  redirectorHits++;
  const u = new URL(req.url ?? '/', 'http://x');
  if (u.pathname === '/to') res.writeHead(302, { location: u.searchParams.get('u') ?? '/' }).end();
  else if (u.pathname === '/hop') res.writeHead(302, { location: `/to?u=${encodeURIComponent(u.searchParams.get('u') ?? '/')}` }).end();
  else html(res, '<title>redirector</title>');
});
await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
const R = (redirector.address() as AddressInfo).port;
const via = (target: string) => `http://127.0.0.1:${R}/to?u=${encodeURIComponent(target)}`;

type Case = { name: string; url: string; allowLoopback?: boolean };
const refused: Case[] = [
  // Literal IPs, every spelling the WHATWG parser normalises to loopback.
  { name: 'loopback 127.0.0.1', url: `http://127.0.0.1:${P}/` },
  { name: 'loopback decimal 2130706433', url: `http://2130706433:${P}/` },
  { name: 'loopback octal 0177.0.0.1', url: `http://0177.0.0.1:${P}/` },
  { name: 'loopback short 127.1', url: `http://127.1:${P}/` },
  { name: 'loopback hex 0x7f.1', url: `http://0x7f.1:${P}/` },
  { name: 'loopback 127.0.0.2 over https', url: `https://127.0.0.2:${P}/` },
  { name: 'loopback ::1', url: `http://[::1]:${P}/` },
  { name: 'IPv4-mapped loopback, even with loopback allowed', url: `http://[::ffff:127.0.0.1]:${P}/`, allowLoopback: true },
  { name: 'IPv4-mapped private', url: `http://[::ffff:10.0.0.1]:${P}/` },
  { name: 'IPv4-compatible private ::10.0.0.1', url: `http://[::10.0.0.1]:${P}/` },
  { name: 'private 10/8, even with loopback allowed', url: `http://10.0.0.1:${P}/`, allowLoopback: true },
  { name: 'private 172.16/12', url: `http://172.16.0.1:${P}/` },
  { name: 'private 192.168/16 on the default port', url: 'http://192.168.1.1/' },
  { name: 'link-local metadata 169.254.169.254', url: 'http://169.254.169.254/latest/meta-data/' },
  { name: 'CGNAT 100.64/10', url: `http://100.64.0.1:${P}/` },
  { name: 'this network 0.0.0.0', url: `http://0.0.0.0:${P}/` },
  { name: 'this network 0.1.2.3', url: `http://0.1.2.3:${P}/` },
  { name: 'unspecified ::', url: `http://[::]:${P}/` },
  { name: 'documentation 192.0.2.1', url: `http://192.0.2.1:${P}/` },
  { name: 'benchmarking 198.18.0.1', url: `http://198.18.0.1:${P}/` },
  { name: 'reserved 240.0.0.1', url: `http://240.0.0.1:${P}/` },
  { name: 'multicast 224.0.0.1', url: `http://224.0.0.1:${P}/` },
  { name: 'broadcast 255.255.255.255', url: `http://255.255.255.255:${P}/` },
  { name: 'ULA fd00::1', url: `http://[fd00::1]:${P}/` },
  { name: 'link-local fe80::1', url: `http://[fe80::1]:${P}/` },
  { name: 'multicast ff02::1', url: `http://[ff02::1]:${P}/` },
  { name: 'documentation 2001:db8::1', url: `http://[2001:db8::1]:${P}/` },
  { name: 'NAT64 64:ff9b::10.0.0.1', url: `http://[64:ff9b::a00:1]:${P}/` },
  { name: '6to4 embedding 10.0.0.1', url: `http://[2002:a00:1::1]:${P}/` },
  { name: 'Teredo embedding 10.0.0.1', url: `http://[2001:0:4136:e378:8000:63bf:f5ff:fffe]:${P}/` },
  // Stubbed DNS answers.
  { name: 'name → 127.0.0.1', url: `http://loop.test:${P}/` },
  { name: 'name → ::1', url: `http://loop6.test:${P}/` },
  { name: 'name → 10.0.0.1, even with loopback allowed', url: `http://private.test:${P}/`, allowLoopback: true },
  { name: 'name → 192.168.1.1', url: `http://private192.test:${P}/` },
  { name: 'name → 169.254.169.254', url: 'http://metadata.test/' },
  { name: 'name → 100.64.0.1', url: `http://cgnat.test:${P}/` },
  { name: 'name → 0.0.0.0', url: `http://zero.test:${P}/` },
  { name: 'name → public and private at once', url: `http://mixed.test:${P}/` },
  { name: 'name → private and public at once', url: `http://mixed-order.test:${P}/` },
  { name: 'name → public IPv6 and ULA at once', url: `http://mixed6.test:${P}/` },
  { name: 'name → public and loopback (loopback not allowed)', url: `https://mixed-loop.test:${P}/` },
  { name: 'name → ::ffff:127.0.0.1, even with loopback allowed', url: `http://mapped.test:${P}/`, allowLoopback: true },
  { name: 'name → ::ffff:10.0.0.1', url: `http://mapped-private.test:${P}/` },
  { name: 'name → NAT64 of 10.0.0.1', url: `http://nat64.test:${P}/` },
  { name: 'name → 6to4 of 10.0.0.1', url: `http://sixtofour.test:${P}/` },
  { name: 'name → Teredo of 10.0.0.1', url: `http://teredo.test:${P}/` },
  { name: 'name → fd00::1', url: `http://ula.test:${P}/` },
  { name: 'name → fe80::1', url: `http://linklocal6.test:${P}/` },
  // Redirects from a loopback server (loopback allowed for its own hop) to refused addresses.
  { name: 'redirect → 10.0.0.1', url: via(`http://10.0.0.1:${P}/`), allowLoopback: true },
  { name: 'redirect → 169.254.169.254', url: via('http://169.254.169.254/latest/meta-data/'), allowLoopback: true },
  { name: 'redirect → [::ffff:10.0.0.1]', url: via(`http://[::ffff:10.0.0.1]:${P}/`), allowLoopback: true },
  { name: 'redirect → [fd00::1]', url: via(`https://[fd00::1]:${P}/`), allowLoopback: true },
  { name: 'redirect → decimal 167772161 (10.0.0.1)', url: via(`http://167772161:${P}/`), allowLoopback: true },
  { name: 'redirect → name → 10.0.0.1', url: via(`http://private.test:${P}/`), allowLoopback: true },
  { name: 'redirect → name → public and private', url: via(`http://mixed.test:${P}/`), allowLoopback: true },
  { name: 'redirect → redirect → 192.168.1.1', url: `http://127.0.0.1:${R}/hop?u=${encodeURIComponent(`http://192.168.1.1:${P}/`)}`, allowLoopback: true },
  { name: 'DNS rebinding: a name loopback at first, private on the redirect', url: `http://rebind.test:${R}/to?u=${encodeURIComponent(`http://rebind.test:${P}/`)}`, allowLoopback: true },
];

type Result = { name: string; reason: string | null; status: number | null; arrivals: Arrival[]; attempts: ConnectAttempt[]; redirectorHits: number };

async function run(c: Case): Promise<Result> {
  arrivals.length = 0;
  attempts.length = 0;
  redirectorHits = 0;
  let reason: string | null = null;
  let status: number | null = null;
  try {
    const res = await outboundFetch(c.url, {
      deadlineMs: 3_000,
      maxBytes: 64 * 1024,
      redirects: 5,
      allowLoopback: c.allowLoopback ?? false,
      resolver,
      onConnect: (a) => attempts.push(a),
    });
    status = res.status;
  } catch (err) {
    reason = err instanceof OutboundError ? err.reason : `unexpected ${String(err)}`;
  }
  // Let any connection a broken door might have opened arrive at the sentinel before counting.
  await new Promise((r) => setTimeout(r, 20));
  // The redirector's own loopback port is expected; everything else is a connection that got through.
  const through = attempts.filter((a) => !(a.port === R && (a.address === '127.0.0.1')));
  return { name: c.name, reason, status, arrivals: [...arrivals], attempts: through, redirectorHits };
}

const results: Result[] = [];
for (const c of refused) results.push(await run(c));

// Controls: the instruments see a connection that is allowed (so an empty record means something).
const controls: Result[] = [];
controls.push(await run({ name: 'control: loopback allowed', url: `http://127.0.0.1:${P}/`, allowLoopback: true }));
controls.push(await run({ name: 'control: a public name', url: `http://public.test:${P}/` }));
controls.push(await run({ name: 'control: a public IPv6 name', url: `http://public6.test:${P}/` }));
controls.push(await run({ name: 'control: a public literal', url: `http://93.184.216.34:${P}/` }));

// POST /v1/link-title through the real app: a redirect to a private address, private literals.
const cert = selfSignedCert();
const app = await startApp({ CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' }, { linkTitleDeadlineMs: 3_000 }, { outbound: { resolver, ca: cert.cert, onConnect: (a) => attempts.push(a) } });
const { session } = await registerUser(app);
const site = await pageServer((req, res) => {
  const u = new URL(req.url ?? '/', 'https://x');
  if (u.pathname === '/to') res.writeHead(302, { location: u.searchParams.get('u') ?? '/' }).end();
  else html(res, '<title>Loopback page</title>');
}, cert);
const linkTitle: { name: string; status: number; title: unknown; arrivals: Arrival[]; attempts: ConnectAttempt[] }[] = [];
const ltCases = [
  { name: 'link-title: the loopback page itself (control)', url: `${site.origin}/page` },
  { name: 'link-title: redirect → https://10.0.0.1', url: `${site.origin}/to?u=${encodeURIComponent(`https://10.0.0.1:${P}/`)}` },
  { name: 'link-title: redirect → http://169.254.169.254 (fetched as https)', url: `${site.origin}/to?u=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}` },
  { name: 'link-title: redirect → name → private', url: `${site.origin}/to?u=${encodeURIComponent(`https://private.test:${P}/`)}` },
  { name: 'link-title: literal http://192.168.1.1', url: 'http://192.168.1.1/' },
  { name: 'link-title: name → public and private', url: `https://mixed.test:${P}/` },
];
for (const c of ltCases) {
  arrivals.length = 0;
  attempts.length = 0;
  const r = await call(app, 'POST', '/v1/link-title', { token: session, body: { url: c.url } });
  await new Promise((res) => setTimeout(res, 20));
  linkTitle.push({ name: c.name, status: r.status, title: r.body?.title, arrivals: [...arrivals], attempts: attempts.filter((a) => !(a.port === site.port && a.address === '127.0.0.1')) });
}
await site.close();
await app.close();
redirector.close();

process.stdout.write(JSON.stringify({ sentinelPort: P, redirectorPort: R, results, controls, linkTitle }));
process.exit(0);
