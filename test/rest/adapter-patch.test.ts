// REST-FACADE: trpc-to-openapi sets `coerce = true` on number/boolean schemas of every request,
// bodies included, permanently. patches/trpc-to-openapi+3.3.0.patch removes that; this test
// mounts the patched adapter on a fixture router with plain z.number()/z.boolean() fields and
// would fail if the patch were lost (e.g. after an upgrade).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { initTRPC } from '@trpc/server';
import { createOpenApiNodeHttpHandler, type OpenApiMeta } from 'trpc-to-openapi';
import { z } from 'zod';

const t = initTRPC.meta<OpenApiMeta>().create();
const BodySchema = z.object({ n: z.number(), flag: z.boolean() }).strict();
const fixture = t.router({
  echo: t.procedure
    .meta({ openapi: { method: 'POST', path: '/echo' } })
    .input(BodySchema)
    .output(z.object({ n: z.number(), flag: z.boolean() }))
    .mutation(({ input }) => input),
  item: t.procedure
    .meta({ openapi: { method: 'GET', path: '/items/{id}' } })
    .input(z.object({ id: z.string() }))
    .output(z.object({ id: z.string() }))
    .query(({ input }) => input),
});

let server: Server;
let url: string;
beforeAll(async () => {
  const handler = createOpenApiNodeHttpHandler({ router: fixture });
  server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const post = (body: unknown) =>
  fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('the patched adapter', () => {
  it('keeps body numbers and booleans strictly typed', async () => {
    expect((await post({ n: 1, flag: false })).status).toBe(200);
    for (const bad of [{ n: '1', flag: false }, { n: null, flag: false }, { n: 1, flag: 'no' }, { n: 1, flag: 0 }]) {
      expect((await post(bad)).status).toBe(400);
    }
    // Nothing was mutated: the schema itself still refuses strings after REST calls.
    expect(BodySchema.safeParse({ n: '1', flag: true }).success).toBe(false);
  });

  it('decodes percent-encoded path parameters', async () => {
    const r = await fetch(`${url}/items/a%20b%2Fc`);
    expect(await r.json()).toEqual({ id: 'a b/c' });
  });
});
