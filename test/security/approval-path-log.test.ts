// Issue 28 item 4: the OAuth approval code travels in the path of /v1/approvals/{code}, and the
// /v1 router matches paths case-insensitively (rest/v1.ts), ignores one trailing slash and
// percent-decodes the code (dashes and spaces in it ignored). The access log's redaction
// (server/access-path.ts) must hold for every spelling the router accepts, and for the spellings
// it refuses too: no access line ever holds the code, in any form.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers/app.js';
import { rawGet, rawHttp, registerUser, type Res } from '../helpers/http.js';
import { logSink } from '../helpers/log-sink.js';
import { loggedPath } from '../../server/access-path.js';

const { lines, stream } = logSink();
let app: TestApp;
let session: string;

beforeAll(async () => {
  app = await startApp({}, {}, { logStream: stream });
  session = (await registerUser(app)).session;
});
afterAll(() => app.close());

const CODE = '482913075';
/** The code as it may be spelt in a path: each form must be absent from the log. */
const FORMS = [CODE, '482-913-075', '482 913 075', '482%20913%20075', '482%2D913%2D075', CODE.split('').map((d) => `%3${d}`).join('')];

function accessLine(r: Res): Record<string, unknown> {
  const id = r.headers.get('x-request-id');
  const entry = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.msg === 'request' && e.requestId === id);
  if (!entry) throw new Error(`no access line for ${id}`);
  return entry;
}

function send(method: string, target: string): Promise<Res> {
  if (method === 'GET') return rawGet(app, target, session);
  const body = method === 'POST' && /approve/i.test(target) ? '{"scopes":["todos:read"]}' : '{}';
  return rawHttp(app, `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${session}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, body);
}

function expectNoCode(line: Record<string, unknown>): void {
  const text = JSON.stringify(line);
  for (const form of FORMS) expect(text.includes(form), `${line.path} holds ${form}`).toBe(false);
  expect(text.replace(/[^0-9]/g, '')).not.toContain(CODE);
}

describe('the approval code is never in the access log (issue 28 item 4)', () => {
  // Spellings the /v1 router routes to an approvals procedure (the log line names it).
  const routed: [string, string, string][] = [
    ['GET', `/v1/approvals/${CODE}`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/${CODE}`, 'approvals.get'],
    ['GET', `/v1/Approvals/${CODE}`, 'approvals.get'],
    ['GET', `/v1/aPpRoVaLs/482-913-075`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/${CODE}/`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/482%20913%20075`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/482%2D913%2D075`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/${FORMS[5]}`, 'approvals.get'],
    ['GET', `/v1/APPROVALS/${CODE}?x=1`, 'approvals.get'],
    ['POST', `/v1/APPROVALS/${CODE}/APPROVE`, 'approvals.approve'],
    ['POST', `/v1/Approvals/${CODE}/Deny`, 'approvals.deny'],
    ['POST', `/v1/approvals/482-913-075/deny/`, 'approvals.deny'],
  ];
  for (const [method, target, route] of routed) {
    it(`${method} ${target} routes to ${route} and logs no code`, async () => {
      const r = await send(method, target);
      expect([404, 422], r.text).toContain(r.status); // routed: no pending approval has this code (422: `x` is no input)
      const line = accessLine(r);
      expect(line.route).toBe(route);
      expectNoCode(line);
      expect(String(line.path)).toContain('[redacted]');
    });
  }

  // Spellings no route takes (a 404 or 405 from the fallback, a dot-segment refusal): still a code
  // in the request line, still never logged.
  const unrouted: [string, string][] = [
    ['GET', `/V1/approvals/${CODE}`],
    ['GET', `//v1/approvals/${CODE}`],
    ['GET', `/v1//APPROVALS//${CODE}`],
    ['GET', `/v1/%61pprovals/${CODE}`],
    ['GET', `/v1/approvals%2F${CODE}`],
    ['GET', `/v1/approvals\\${CODE}`],
    ['GET', `/v1/./APPROVALS/${CODE}`],
    ['GET', `/v1/approvals/x/../${CODE}`],
    ['PUT', `/v1/APPROVALS/${CODE}`],
    ['DELETE', `/v1/approvals/${CODE}/approve`],
  ];
  for (const [method, target] of unrouted) {
    it(`${method} ${target} (not routed) logs no code`, async () => {
      const r = await send(method, target);
      expect(r.status).toBeGreaterThanOrEqual(400);
      const line = accessLine(r);
      expect(String(line.route ?? '')).not.toMatch(/^approvals\./);
      expectNoCode(line);
    });
  }

  it('no log line of any kind holds the code (run last)', () => {
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) expectNoCode(JSON.parse(line) as Record<string, unknown>);
  });

  it('keeps the action word and every other path as sent', () => {
    expect(loggedPath(`/v1/APPROVALS/${CODE}/Approve?x=${CODE}`)).toBe('/v1/APPROVALS/[redacted]/Approve');
    expect(loggedPath('/v1/approvals/482-913-075/deny')).toBe('/v1/approvals/[redacted]/deny');
    expect(loggedPath(`/v1/todos/${CODE}`)).toBe(`/v1/todos/${CODE}`);
    expect(loggedPath('/v1/tags/%41B')).toBe('/v1/tags/%41B');
    expect(loggedPath('/v1/approvals')).toBe('/v1/approvals');
  });
});
