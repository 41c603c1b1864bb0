// The door scenarios of `npm run bench` (docs/performance.md "CalDAV and MCP"):
//   dav-propfind    PROPFIND Depth 1 of a 500-item calendar (hrefs + ETags)
//   dav-multiget    calendar-multiget of 100 items (ETags + calendar-data), windows rotating over the 500
//   dav-sync        sync-collection from a token with exactly one change since (ETags)
//   dav-put         PUT of an existing to-do (a new SUMMARY each time), rotating over a ~194-item calendar
//   dav-tsdav-sync  a first full sync of the whole account by tsdav (discovery, calendars, then a
//                   VTODO calendar-query per calendar), wall clock; Cairn's peak RSS while serving it
//   mcp-find-today  `tools/call find_todos {view: today}` against its REST twin GET /v1/views/today
// CalDAV runs on Cairn (an app password over HTTP Basic) and on Radicale (radicale.ts) in the same
// run, 1 connection, the order of the two rotating per scenario; both get the same request bytes
// but for the path prefix and the credential. Radicale's storage is written from Cairn's own
// answer to a tsdav full sync (the warm-up), so both hold the same iCalendar under the same names.
import { DAVClient } from 'tsdav';
import type { LoadRequest, LoadResult } from './load.js';
import { runSerial } from './serial.js';
import { rotate } from './stats.js';
import { rssOf, resetPeakRss } from './procs.js';
import { startRadicale, radicaleVersion, type RadicaleCollection, type RadicaleServer } from './radicale.js';
import { DOOR_IDS, type DoorId, type DoorOutcome, type DoorsRecord } from './doors-report.js';
import type { DoorSeed } from './protocol.js';

export { DOOR_IDS };

export type DoorOpts = { warmupS: number; durationS: number; syncRuns: number; keepData: boolean; only: RegExp | null; today: string; log: (s: string) => void };

const VTODO_FILTER = [{ 'comp-filter': { _attributes: { name: 'VCALENDAR' }, 'comp-filter': { _attributes: { name: 'VTODO' } } } }];
const XML = 'application/xml; charset=utf-8';

/** One CalDAV server as the scenarios see it: base URL, the account's home path and its credential. */
type DavSide = { url: string; home: string; user: string; password: string; pid: number | undefined };

const basic = (s: DavSide) => `Basic ${Buffer.from(`${s.user}:${s.password}`).toString('base64')}`;

/** Which door scenarios `--only` selects (all in a full run; none in --quick unless named). */
export function selectedDoors(only: RegExp | null, quick: boolean): DoorId[] {
  if (only) return DOOR_IDS.filter((id) => only.test(id));
  return quick ? [] : [...DOOR_IDS];
}

type Synced = { ms: number; calendars: { url: string; displayName: string; objects: { url: string; data: string }[] }[] };

/** A first full sync as tsdav does it: discovery, the calendars, then every calendar's VTODOs. */
async function tsdavSync(s: DavSide): Promise<Synced> {
  const t0 = process.hrtime.bigint();
  const client = new DAVClient({ serverUrl: s.url, credentials: { username: s.user, password: s.password }, authMethod: 'Basic', defaultAccountType: 'caldav' });
  await client.login();
  const cals = await client.fetchCalendars();
  const calendars: Synced['calendars'] = [];
  for (const cal of cals) {
    const objs = await client.fetchCalendarObjects({ calendar: cal, filters: VTODO_FILTER });
    calendars.push({ url: cal.url, displayName: String(cal.displayName ?? ''), objects: objs.map((o) => ({ url: o.url, data: String(o.data ?? '') })) });
  }
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, calendars };
}

const lastSegment = (url: string) => decodeURIComponent(new URL(url, 'http://x').pathname.replace(/\/$/, '').split('/').pop()!);

/** The request bodies and paths of the four load scenarios, for one side. */
function davRequest(id: DoorId, s: DavSide, fx: DavFixture): LoadRequest {
  const auth = { authorization: basic(s) };
  const col = (k: number) => `${s.home}${fx.projectIds[k]}/`;
  if (id === 'dav-propfind') {
    return {
      method: 'PROPFIND',
      path: () => col(0),
      headers: { ...auth, depth: '1', 'content-type': XML },
      body: () => '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>',
    };
  }
  if (id === 'dav-multiget') {
    let w = 0;
    const names = fx.members[0]!;
    return {
      method: 'REPORT',
      path: () => col(0),
      headers: { ...auth, 'content-type': XML },
      body: () => {
        const start = (w++ % Math.max(1, Math.floor(names.length / 100))) * 100;
        const hrefs = names.slice(start, start + 100).map((n) => `<d:href>${col(0)}${encodeURIComponent(n)}.ics</d:href>`).join('');
        return `<?xml version="1.0" encoding="utf-8"?><c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>${hrefs}</c:calendar-multiget>`;
      },
    };
  }
  if (id === 'dav-sync') {
    const token = fx.syncToken.get(s)!;
    return { method: 'REPORT', path: () => col(1), headers: { ...auth, 'content-type': XML }, body: () => syncBody(token) };
  }
  // dav-put: an existing to-do of project 2 with a new SUMMARY (no If-Match: both servers overwrite).
  // path() picks the item, body() writes it (callers call path first).
  let n = 0;
  let todoId = '';
  const items = fx.members[2]!;
  return {
    method: 'PUT',
    path: () => {
      todoId = items[n++ % items.length]!;
      return `${col(2)}${encodeURIComponent(todoId)}.ics`;
    },
    headers: { ...auth, 'content-type': 'text/calendar; charset=utf-8' },
    body: () => withSummary(fx.ics.get(todoId)!, `bench put ${n}`),
  };
}

/** The iCalendar with its SUMMARY replaced (a folded SUMMARY's continuation lines go too). */
const withSummary = (ics: string, summary: string) => ics.replace(/^SUMMARY[;:][^\r\n]*(\r?\n[ \t][^\r\n]*)*/m, `SUMMARY:${summary}`);

const syncBody = (token: string) =>
  `<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:"><d:sync-token>${token}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`;

type DavFixture = { projectIds: string[]; members: string[][]; ics: Map<string, string>; syncToken: Map<DavSide, string> };

async function send(s: DavSide, req: LoadRequest): Promise<{ status: number; text: string }> {
  const path = req.path(); // before body(): the PUT's body follows the item its path names
  const init: RequestInit = { method: req.method, headers: req.headers, signal: AbortSignal.timeout(120_000) };
  if (req.body) init.body = req.body();
  const res = await fetch(s.url + path, init);
  return { status: res.status, text: await res.text() };
}

/**
 * dav-sync's setup on one side: a sync token of project 1 now, then one change to one of its
 * to-dos; the scenario then asks, again and again, for what changed since that token (one item).
 */
async function prepareSync(s: DavSide, fx: DavFixture): Promise<void> {
  const col = `${s.home}${fx.projectIds[1]}/`;
  const first = await send(s, { method: 'REPORT', path: () => col, headers: { authorization: basic(s), 'content-type': XML }, body: () => syncBody('') });
  const token = /<(?:[\w-]+:)?sync-token>([^<]+)</.exec(first.text)?.[1];
  if (first.status !== 207 || !token) throw new Error(`initial sync-collection: ${first.status} ${first.text.slice(0, 200)}`);
  const todoId = fx.members[1]![0]!;
  const put = await send(s, {
    method: 'PUT',
    path: () => `${col}${todoId}.ics`,
    headers: { authorization: basic(s), 'content-type': 'text/calendar; charset=utf-8' },
    body: () => withSummary(fx.ics.get(todoId)!, 'the one change'),
  });
  if (put.status >= 300) throw new Error(`the one change (PUT): ${put.status} ${put.text.slice(0, 200)}`);
  const check = await send(s, { method: 'REPORT', path: () => col, headers: { authorization: basic(s), 'content-type': XML }, body: () => syncBody(token) });
  const answers = (check.text.match(/<(?:[\w-]+:)?response>/g) ?? []).length;
  if (check.status !== 207 || answers !== 1) throw new Error(`sync-collection after one change: ${check.status}, ${answers} responses (expected 1)`);
  fx.syncToken.set(s, token);
}

let k = 0;

async function measure(sides: [string, () => LoadRequest, string][], o: DoorOpts, pid: number | undefined, outcome: DoorOutcome): Promise<void> {
  let peak = 0;
  for (const [who, req, url] of rotate(sides, k++)) {
    const tracked = who === 'cairn' && resetPeakRss(pid);
    if (o.warmupS > 0) await runSerial(url, req(), o.warmupS);
    const r: LoadResult = await runSerial(url, req(), o.durationS);
    outcome.results[who as 'cairn'] = r;
    if (tracked) peak = Math.max(peak, rssOf(pid)?.peak ?? 0);
  }
  if (peak) outcome.peakRssCairn = peak;
}

/** Runs the selected door scenarios against a running Cairn (seeded by seed-doors.ts). */
export async function runDoors(ids: DoorId[], cairn: { url: string; pid: number | undefined }, seed: DoorSeed, o: DoorOpts): Promise<DoorsRecord> {
  const rec: DoorsRecord = { radicale: radicaleVersion(), todos: seed.todos, projects: seed.projectIds.length, seedSeconds: seed.seconds, outcomes: [] };
  const c: DavSide = { url: cairn.url, home: `/dav/${seed.userId}/`, user: seed.email, password: seed.davPassword, pid: cairn.pid };
  const fx: DavFixture = { projectIds: seed.projectIds, members: seed.members, ics: new Map(), syncToken: new Map() };
  const davIds = ids.filter((id) => id.startsWith('dav-'));
  let radicale: RadicaleServer | null = null;
  let r: DavSide | null = null;

  if (davIds.length) {
    // Warm-up: one full sync of Cairn by tsdav; its answer becomes Radicale's storage.
    o.log('bench: doors: a first full sync of Cairn by tsdav (warm-up; it fills Radicale)…');
    const synced = await tsdavSync(c);
    const collections: RadicaleCollection[] = [];
    for (const cal of synced.calendars) {
      const objects = cal.objects.map((x) => ({ name: lastSegment(x.url), data: x.data }));
      for (const x of objects) fx.ics.set(x.name.replace(/\.ics$/, ''), x.data);
      collections.push({ id: lastSegment(cal.url), displayName: cal.displayName, objects });
    }
    o.log(`bench: doors: Cairn served ${collections.length} calendars, ${fx.ics.size} to-dos in ${(synced.ms / 1000).toFixed(2)} s`);
    if (!rec.radicale) {
      for (const id of davIds) rec.outcomes.push({ id, label: labelOf(id), status: 'skipped', reason: 'radicale is not installed', results: {} });
    } else {
      radicale = await startRadicale(collections, o.keepData);
      r = { url: radicale.url, home: `/${radicale.user}/`, user: radicale.user, password: radicale.password, pid: radicale.child.proc.pid };
      const warm = await tsdavSync(r); // Radicale builds its item cache on first read
      o.log(`bench: doors: Radicale ${radicale.version} on ${radicale.url}; its first full sync took ${(warm.ms / 1000).toFixed(2)} s (warm-up)`);
    }
  }

  try {
    for (const id of ids) {
      if (id === 'mcp-find-today') {
        rec.outcomes.push(await mcpScenario(c.url, seed, o));
        continue;
      }
      if (!r) continue;
      const outcome: DoorOutcome = { id, label: labelOf(id), status: 'ok', results: {} };
      rec.outcomes.push(outcome);
      try {
        if (id === 'dav-tsdav-sync') {
          await fullSyncs(c, r, o, outcome);
        } else {
          if (id === 'dav-sync') await Promise.all([prepareSync(c, fx), prepareSync(r, fx)]);
          for (const side of [c, r]) {
            const probe = await send(side, davRequest(id, side, fx));
            if (probe.status >= 300) throw new Error(`${side === c ? 'Cairn' : 'Radicale'}: ${probe.status} ${probe.text.slice(0, 200)}`);
          }
          await measure(
            [
              ['cairn', () => davRequest(id, c, fx), c.url],
              ['radicale', () => davRequest(id, r!, fx), r.url],
            ],
            o,
            c.pid,
            outcome,
          );
        }
        o.log(`bench: doors: ${summary(outcome)}`);
      } catch (e) {
        outcome.status = 'error';
        outcome.reason = e instanceof Error ? e.message : String(e);
        o.log(`bench: doors: ${outcome.label}: ERROR ${outcome.reason}`);
      }
    }
  } finally {
    if (radicale) {
      const { stop } = await import('./procs.js');
      await stop(radicale.child);
    }
  }
  return rec;
}

function summary(x: DoorOutcome): string {
  if (x.syncMs) return `${x.label}: Cairn ${x.syncMs.cairn?.map((v) => v.toFixed(0)).join(', ')} ms, Radicale ${x.syncMs.radicale?.map((v) => v.toFixed(0)).join(', ')} ms; Cairn peak ${((x.peakRssCairn ?? 0) / 1e6).toFixed(1)} MB`;
  const f = (t: 'cairn' | 'radicale' | 'rest') => {
    const v = x.results[t];
    return v ? `${t} ${v.rps.toFixed(0)}/s p50 ${v.lat.p50.toFixed(2)} ms${v.non2xx || v.errors ? ` ⚠ ${JSON.stringify(v.statuses)} errors ${v.errors}` : ''}` : '';
  };
  return `${x.label}: ${f('cairn')}  ${f('radicale')}${f('rest')}`;
}

/** dav-tsdav-sync: `syncRuns` first full syncs per server, interleaved; Cairn's peak RSS across its runs. */
async function fullSyncs(c: DavSide, r: DavSide, o: DoorOpts, outcome: DoorOutcome): Promise<void> {
  outcome.syncMs = { cairn: [], radicale: [] };
  outcome.synced = {};
  let peak = 0;
  for (let i = 0; i < o.syncRuns; i++) {
    for (const [who, side] of rotate([['cairn', c], ['radicale', r]] as const, i)) {
      const tracked = who === 'cairn' && resetPeakRss(c.pid);
      const s = await tsdavSync(side);
      if (tracked) peak = Math.max(peak, rssOf(c.pid)?.peak ?? 0);
      outcome.syncMs[who]!.push(s.ms);
      const objects = s.calendars.reduce((n, x) => n + x.objects.length, 0);
      const bytes = s.calendars.reduce((n, x) => n + x.objects.reduce((m, y) => m + Buffer.byteLength(y.data), 0), 0);
      outcome.synced[who] = { calendars: s.calendars.length, objects, bytes };
    }
  }
  if (peak) outcome.peakRssCairn = peak;
}

/** mcp-find-today: the tool call of an assistant on the 2026-07-28 revision, and its REST twin. */
async function mcpScenario(url: string, seed: DoorSeed, o: DoorOpts): Promise<DoorOutcome> {
  const outcome: DoorOutcome = { id: 'mcp-find-today', label: labelOf('mcp-find-today'), status: 'ok', results: {} };
  let id = 0;
  const mcp = (): LoadRequest => ({
    method: 'POST',
    path: () => '/mcp',
    headers: {
      authorization: `Bearer ${seed.mcpToken}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'find_todos',
    },
    body: () =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: {
          name: 'find_todos',
          arguments: { view: 'today', today: o.today },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'cairn-bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} },
        },
      }),
  });
  const rest = (): LoadRequest => ({ method: 'GET', path: () => `/v1/views/today?today=${o.today}`, headers: { authorization: `Bearer ${seed.restToken}` } });
  try {
    const m = mcp();
    const res = await fetch(url + m.path(), { method: 'POST', headers: m.headers, body: m.body!(), signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    const body = JSON.parse(/^data: (.*)$/m.exec(text)?.[1] ?? text) as { result?: { isError?: boolean; structuredContent?: { todos?: unknown[] } }; error?: unknown };
    if (res.status !== 200 || !body.result || body.result.isError) throw new Error(`MCP tools/call: ${res.status} ${text.slice(0, 300)}`);
    const t = rest();
    const rr = await fetch(url + t.path(), { headers: t.headers });
    const restBody = (await rr.json()) as { todos?: unknown[]; evening?: unknown[] };
    if (rr.status !== 200) throw new Error(`GET /v1/views/today: ${rr.status}`);
    o.log(
      `bench: doors: today holds ${(restBody.todos?.length ?? 0) + (restBody.evening?.length ?? 0)} to-dos over REST; find_todos returns ${body.result.structuredContent?.todos?.length ?? '?'} (its default page)`,
    );
    await measure(
      [
        ['cairn', mcp, url],
        ['rest', rest, url],
      ],
      o,
      undefined,
      outcome,
    );
    o.log(`bench: doors: ${summary(outcome)}`);
  } catch (e) {
    outcome.status = 'error';
    outcome.reason = e instanceof Error ? e.message : String(e);
    o.log(`bench: doors: ${outcome.label}: ERROR ${outcome.reason}`);
  }
  return outcome;
}

export function labelOf(id: DoorId): string {
  return {
    'dav-propfind': 'PROPFIND Depth 1, 500 items (ETags)',
    'dav-multiget': 'REPORT calendar-multiget, 100 items',
    'dav-sync': 'REPORT sync-collection, one change',
    'dav-put': 'PUT an existing to-do',
    'dav-tsdav-sync': 'first full sync by tsdav (10k to-dos)',
    'mcp-find-today': 'MCP find_todos today vs GET /v1/views/today',
  }[id];
}
