// Spec §6.5, issue 16 item 4: deliveries live in SQLite. The real server process (system clock,
// NODE_EXTRA_CA_CERTS trust, CAIRN_UNSAFE_ALLOW_LOOPBACK=1) sends to a receiver that holds every
// request open; it is killed with SIGKILL mid-queue (some sends in flight, the rest waiting),
// restarted on the same DATA_DIR, and every event is then delivered, the cut-off ones again with
// the same event id (at-least-once). No delivery is lost.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverPid, startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call, registerUser } from '../helpers/http.js';
import { selfSignedCert } from '../helpers/tls.js';
import { receiver, until, type Receiver } from './receiver.js';

const dir = mkdtempSync(path.join(tmpdir(), 'cairn-wh-crash-'));
const servers: ServerProcess[] = [];
let r: Receiver | undefined;

afterAll(async () => {
  for (const s of servers) await s.stop();
  await r?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 (and SIGTERM) mid-queue', () => {
  it('loses no delivery: after a restart every event arrives, the cut-off ones with the same event id', async () => {
    const cert = selfSignedCert();
    r = await receiver(cert, 'hang');
    const env = { NODE_EXTRA_CA_CERTS: cert.certPath, CAIRN_UNSAFE_ALLOW_LOOPBACK: '1' };
    const s1 = await startServerProcess(dir, env);
    servers.push(s1);
    const { session } = await registerUser(s1);
    const w = await call(s1, 'POST', '/v1/webhooks', { token: session, body: { url: r.url(), events: ['tag.created'] } });
    expect(w.status, w.text).toBe(201);
    for (let i = 0; i < 4; i++) expect((await call(s1, 'POST', '/v1/tags', { token: session, body: { name: `t${i}` } })).status).toBeLessThan(300);
    // Two sends in flight (the per-subscription bound), hanging; three waiting in the queue.
    await until(() => r!.got.length >= 2, 20_000);
    const cutOff = r.got.map((g) => String(g.headers['x-service-event-id']));
    // The server's own node process (tsx runs it as a child): killing tsx would leave it running,
    // still sending, beside the restarted one on the same DATA_DIR.
    process.kill(serverPid(s1), 'SIGKILL');
    const ended = await s1.exited;
    // tsx reports a SIGKILL'd child as 128 + 9.
    expect(ended.signal === 'SIGKILL' || ended.code === 137, JSON.stringify(ended)).toBe(true);

    r.answer = 200;
    const s2 = await startServerProcess(dir, env);
    servers.push(s2);
    const log = async () => (await call(s2, 'GET', `/v1/webhooks/${w.body.id}/deliveries`, { token: session })).body.data as { eventId: string; eventType: string; status: string }[];
    const end = Date.now() + 30_000;
    let data = await log();
    while (!(data.length === 5 && data.every((x) => x.status === 'delivered'))) {
      if (Date.now() > end) throw new Error(`not all delivered: ${JSON.stringify(data)}`);
      await new Promise((res) => setTimeout(res, 200));
      data = await log();
    }
    expect(data.map((x) => x.eventType).sort()).toEqual(['tag.created', 'tag.created', 'tag.created', 'tag.created', 'webhook.ping']);
    const ok = new Set(r.got.filter((g) => g.answered === 200).map((g) => String(g.headers['x-service-event-id'])));
    expect([...ok].sort()).toEqual(data.map((x) => x.eventId).sort());
    for (const id of cutOff) expect(ok.has(id), id).toBe(true);
    expect(cutOff.length).toBeGreaterThanOrEqual(2);

    // A graceful stop (SIGTERM) with a send hanging: the process still ends at once (the send does
    // not hold it), and the cut-off delivery goes again after the next start.
    r.answer = 'hang';
    const seen = r.got.length;
    expect((await call(s2, 'POST', '/v1/tags', { token: session, body: { name: 'during-stop' } })).status).toBeLessThan(300);
    await until(() => r!.got.length > seen, 20_000);
    const hung = String(r.got.at(-1)!.headers['x-service-event-id']);
    const t = Date.now();
    s2.child.kill('SIGTERM');
    expect((await s2.exited).code).toBe(0);
    expect(Date.now() - t).toBeLessThan(5_000);
    r.answer = 200;
    const s3 = await startServerProcess(dir, env);
    servers.push(s3);
    await until(() => r!.got.some((g) => g.answered === 200 && g.headers['x-service-event-id'] === hung), 20_000);
  }, 90_000);
});
