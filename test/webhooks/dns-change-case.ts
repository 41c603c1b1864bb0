// Run by dns-change.test.ts inside a loopback-only network namespace (nothing here can leave the
// machine even if the door were broken). A subscription to https://localhost:<port>/ is created
// while the name resolves to 127.0.0.1 (allowed with CAIRN_UNSAFE_ALLOW_LOOPBACK=1); then the name
// starts resolving to 10.0.0.1, a private address added to this namespace's loopback with a
// listener on it. The next send must be refused at send time, recorded as `refused_address`, and
// no connection may reach the private listener. Prints its findings as JSON.
import https from 'node:https';
import { startApp } from '../helpers/app.js';
import { call, registerUser } from '../helpers/http.js';
import { selfSignedCert } from '../helpers/tls.js';
import { createDispatcher } from '../../server/webhooks/dispatcher.js';
import { recordEvent } from '../../routers/events.js';
import type { ConnectAttempt } from '../../core/net/index.js';
import { receiver } from './receiver.js';

const cert = selfSignedCert();
let answer = '127.0.0.1';
const connects: ConnectAttempt[] = [];
const app = await startApp(
  { CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' },
  {},
  { outbound: { ca: cert.cert, resolver: async (h) => (h === 'localhost' ? [{ address: answer, family: 4 }] : []), onConnect: (a) => connects.push(a) } },
);
const good = await receiver(cert, 200, '127.0.0.1');
let privateArrivals = 0;
const priv = https.createServer({ key: cert.key, cert: cert.cert }, (_req, res) => res.end('ok'));
priv.on('connection', () => privateArrivals++);
await new Promise<void>((resolve) => priv.listen(good.port, '10.0.0.1', resolve));

const { session, userId } = await registerUser(app);
const created = await call(app, 'POST', '/v1/webhooks', { token: session, body: { url: `https://localhost:${good.port}/hook`, events: ['todo.created'] } });
const d = createDispatcher(app.deps);
await d.settle();
const firstArrivals = good.got.length;

answer = '10.0.0.1'; // the DNS changed since creation
recordEvent(app.deps, { userId, type: 'todo.created', id: 'AFTER-DNS-CHANGE', at: app.clock() });
await d.settle();
const log = await call(app, 'GET', `/v1/webhooks/${created.body.id}/deliveries`, { token: session });
// A PATCH or a new subscription to the same name is refused at /url now.
const again = await call(app, 'POST', '/v1/webhooks', { token: session, body: { url: `https://localhost:${good.port}/hook`, events: ['todo.created'] } });

console.log(
  JSON.stringify({
    createdStatus: created.status,
    firstArrivals,
    arrivalsAfter: good.got.length,
    privateArrivals,
    connects,
    deliveries: log.body.data,
    againStatus: again.status,
    againPointers: (again.body.errors ?? []).map((e: { pointer: string }) => e.pointer),
  }),
);
d.stop();
await good.close();
priv.closeAllConnections();
priv.close();
await app.close();
process.exit(0);
