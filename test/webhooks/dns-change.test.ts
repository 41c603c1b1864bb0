// Spec §6.5.1 (docs/webhooks.md "Sending"): a target is checked at every send, not only at
// create. Runs test/webhooks/dns-change-case.ts in a network namespace whose only interface is
// loopback (`unshare -rn`), as test/net/door.test.ts does, so a broken guard reaches nothing.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

describe('a private target after a DNS change is refused at send time', () => {
  it('records refused_address, and no connection reaches the private address', () => {
    const script = ['ip link set lo up', 'ip addr add 10.0.0.1/32 dev lo', `exec ${JSON.stringify(process.execPath)} --import tsx test/webhooks/dns-change-case.ts`].join(' && ');
    const child = spawnSync('unshare', ['-rn', 'sh', '-c', script], { cwd: root, encoding: 'utf8', timeout: 90_000, env: { ...process.env, LOG_LEVEL: 'silent' } });
    if (child.error || child.status !== 0) {
      throw new Error(`needs a loopback-only network namespace (unshare -rn, ip): status ${child.status} ${child.error?.message ?? ''}\n${child.stderr}`);
    }
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      createdStatus: number;
      firstArrivals: number;
      arrivalsAfter: number;
      privateArrivals: number;
      connects: { address: string }[];
      deliveries: { eventType: string; status: string; attempts: { status: number | null; errorClass: string | null }[] }[];
      againStatus: number;
      againPointers: string[];
    };
    expect(out.createdStatus).toBe(201);
    expect(out.firstArrivals).toBe(1); // the ping, while the name resolved to loopback
    expect(out.arrivalsAfter).toBe(1);
    expect(out.privateArrivals).toBe(0);
    expect(out.connects.map((c) => c.address)).toEqual(['127.0.0.1']);
    const after = out.deliveries.find((x) => x.eventType === 'todo.created')!;
    expect(after.attempts).toEqual([{ at: expect.any(String), status: null, latencyMs: expect.any(Number), errorClass: 'refused_address' }]);
    expect(after.status).toBe('pending'); // retried later, checked again each time
    expect(out.againStatus).toBe(422);
    expect(out.againPointers).toEqual(['/url']);
  }, 120_000);
});
