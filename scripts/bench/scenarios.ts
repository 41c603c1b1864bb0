// The scenarios: one request shape per scenario, built for B (X-Bench-Account, B's ids) and for
// C (a real personal access token, Cairn's ids). A receives exactly C's request and answers its
// fixed JSON. Ids rotate over up to 500 seeded rows so no single row stays hot.
import { FILTER_CRITERIA, SEARCH_TERM } from './fixtures.js';
import type { LoadRequest } from './load.js';
import type { SeededAccount } from './protocol.js';

export type Kind = 'identity' | 'read' | 'write' | 'decrypting';
export type Target = 'A' | 'B' | 'C';

export type Scenario = {
  id: string;
  label: string;
  kind: Kind;
  /** 'core' = the list; 'tags' = the same four operations on tags; 'sized' = per account size. */
  group: 'core' | 'tags' | 'sized';
  account: string;
  /** Sized scenarios: the account's to-do count and the operation they share across sizes. */
  size?: number;
  op?: string;
  needs?: 'todos' | 'tags' | 'filter';
  /** Load shape: sized (decrypting) scenarios run with one connection, so latency = time per request. */
  connections: 'throughput' | 'single';
  build: (acct: SeededAccount, who: 'B' | 'C', ctx: { today: string; nonce: string }) => LoadRequest;
};

function cycle(ids: readonly string[]): () => string {
  let i = 0;
  return () => ids[i++ % ids.length]!;
}

function counter(): () => number {
  let n = 0;
  return () => ++n;
}

export function headersFor(acct: SeededAccount, who: 'B' | 'C', body = false, credential: 'token' | 'session' = 'token'): Record<string, string> {
  const h: Record<string, string> = who === 'C' ? { authorization: `Bearer ${credential === 'session' ? acct.session : acct.token}` } : { 'x-bench-account': acct.name };
  if (body) h['content-type'] = 'application/json';
  return h;
}

const trpcInput = (id: string) => encodeURIComponent(JSON.stringify({ json: { id } }));

export const CRUD_ACCOUNT = 'crud';

/** One to-do read by id over the crud account's to-dos (`path` builds the URL), C presenting the account's token or session. */
function todoGet(id: string, label: string, path: (todoId: string) => string, credential: 'token' | 'session' = 'token'): Scenario {
  return {
    id,
    label,
    kind: 'read',
    group: 'core',
    account: CRUD_ACCOUNT,
    needs: 'todos',
    connections: 'throughput',
    build: (a, who) => {
      const next = cycle(a.todoIds);
      return { method: 'GET', path: () => path(next()), headers: headersFor(a, who, false, credential) };
    },
  };
}
const trpcGetPath = (todoId: string) => `/trpc/todos.get?input=${trpcInput(todoId)}`;

export function buildScenarios(sizes: readonly number[]): Scenario[] {
  const core: Scenario[] = [
    {
      id: 'me',
      label: 'GET /v1/me',
      kind: 'identity',
      group: 'core',
      account: CRUD_ACCOUNT,
      connections: 'throughput',
      build: (a, who) => ({ method: 'GET', path: () => '/v1/me', headers: headersFor(a, who) }),
    },
    {
      id: 'trpc-me',
      label: 'GET /trpc/me.get',
      kind: 'identity',
      group: 'core',
      account: CRUD_ACCOUNT,
      connections: 'throughput',
      build: (a, who) => ({ method: 'GET', path: () => '/trpc/me.get', headers: headersFor(a, who) }),
    },
    todoGet('todo-get', 'GET /v1/todos/{id}', (todoId) => `/v1/todos/${todoId}`),
    todoGet('trpc-todo-get', 'GET /trpc/todos.get (same read)', trpcGetPath),
    // The first-party path as a first-party app calls it: with a session (a JWT), not a personal token.
    todoGet('trpc-todo-get-session', 'GET /trpc/todos.get (first-party session)', trpcGetPath, 'session'),
    {
      id: 'todo-list',
      label: 'GET /v1/todos?limit=50',
      kind: 'read',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who) => ({ method: 'GET', path: () => '/v1/todos?limit=50', headers: headersFor(a, who) }),
    },
    {
      id: 'todo-create',
      label: 'POST /v1/todos',
      kind: 'write',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who, ctx) => {
        const n = counter();
        return {
          method: 'POST',
          path: () => '/v1/todos',
          headers: headersFor(a, who, true),
          body: () => JSON.stringify({ title: `bench ${ctx.nonce} created ${n()}`, notes: 'Written by the benchmark.' }),
        };
      },
    },
    {
      id: 'todo-update',
      label: 'PATCH /v1/todos/{id}',
      kind: 'write',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who, ctx) => {
        const next = cycle(a.todoIds);
        const n = counter();
        return { method: 'PATCH', path: () => `/v1/todos/${next()}`, headers: headersFor(a, who, true), body: () => JSON.stringify({ title: `bench ${ctx.nonce} edit ${n()}` }) };
      },
    },
    // The /trpc twins (issue 12: the first-party path must be at least as fast as /v1).
    {
      id: 'trpc-todo-list',
      label: 'GET /trpc/todos.list (limit 50)',
      kind: 'read',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who) => ({ method: 'GET', path: () => `/trpc/todos.list?input=${encodeURIComponent(JSON.stringify({ json: { limit: 50 } }))}`, headers: headersFor(a, who) }),
    },
    {
      id: 'trpc-todo-create',
      label: 'POST /trpc/todos.create',
      kind: 'write',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who, ctx) => {
        const n = counter();
        return {
          method: 'POST',
          path: () => '/trpc/todos.create',
          headers: headersFor(a, who, true),
          body: () => JSON.stringify({ json: { title: `bench ${ctx.nonce} trpc created ${n()}`, notes: 'Written by the benchmark.' } }),
        };
      },
    },
    {
      id: 'trpc-todo-update',
      label: 'POST /trpc/todos.update',
      kind: 'write',
      group: 'core',
      account: CRUD_ACCOUNT,
      needs: 'todos',
      connections: 'throughput',
      build: (a, who, ctx) => {
        const next = cycle(a.todoIds);
        const n = counter();
        return { method: 'POST', path: () => '/trpc/todos.update', headers: headersFor(a, who, true), body: () => JSON.stringify({ json: { id: next(), title: `bench ${ctx.nonce} trpc edit ${n()}` } }) };
      },
    },
  ];

  const tags: Scenario[] = [
    {
      id: 'tag-get',
      label: 'GET /v1/tags/{id}',
      kind: 'read',
      group: 'tags',
      account: CRUD_ACCOUNT,
      needs: 'tags',
      connections: 'throughput',
      build: (a, who) => {
        const next = cycle(a.tagIds);
        return { method: 'GET', path: () => `/v1/tags/${next()}`, headers: headersFor(a, who) };
      },
    },
    {
      id: 'trpc-tag-get',
      label: 'GET /trpc/tags.get (same read)',
      kind: 'read',
      group: 'tags',
      account: CRUD_ACCOUNT,
      needs: 'tags',
      connections: 'throughput',
      build: (a, who) => {
        const next = cycle(a.tagIds);
        return { method: 'GET', path: () => `/trpc/tags.get?input=${trpcInput(next())}`, headers: headersFor(a, who) };
      },
    },
    {
      id: 'tag-list',
      label: 'GET /v1/tags?limit=50',
      kind: 'read',
      group: 'tags',
      account: CRUD_ACCOUNT,
      needs: 'tags',
      connections: 'throughput',
      build: (a, who) => ({ method: 'GET', path: () => '/v1/tags?limit=50', headers: headersFor(a, who) }),
    },
    {
      id: 'tag-create',
      label: 'POST /v1/tags',
      kind: 'write',
      group: 'tags',
      account: CRUD_ACCOUNT,
      needs: 'tags',
      connections: 'throughput',
      build: (a, who, ctx) => {
        const n = counter();
        // Unique names: every request creates a tag (201), as a write should.
        return { method: 'POST', path: () => '/v1/tags', headers: headersFor(a, who, true), body: () => JSON.stringify({ name: `b${ctx.nonce}-${who}-${n()}` }) };
      },
    },
    {
      id: 'tag-update',
      label: 'PATCH /v1/tags/{id}',
      kind: 'write',
      group: 'tags',
      account: CRUD_ACCOUNT,
      needs: 'tags',
      connections: 'throughput',
      build: (a, who) => {
        const next = cycle(a.tagIds);
        const n = counter();
        return {
          method: 'PATCH',
          path: () => `/v1/tags/${next()}`,
          headers: headersFor(a, who, true),
          body: () => JSON.stringify({ colorHex: `#${(n() & 0xffffff).toString(16).padStart(6, '0')}` }),
        };
      },
    },
  ];

  const sized: Scenario[] = [];
  for (const size of sizes) {
    const account = sizedAccount(size);
    const common = { kind: 'decrypting' as const, group: 'sized' as const, account, size, connections: 'single' as const };
    // The views (issue 14): one scenario each, the same request shape.
    const view = (name: string): Scenario => ({
      ...common,
      id: `view-${name}@${size}`,
      op: `GET /v1/views/${name}`,
      label: `GET /v1/views/${name} (${size})`,
      needs: 'todos',
      build: (a, who, ctx) => ({ method: 'GET', path: () => `/v1/views/${name}?today=${ctx.today}`, headers: headersFor(a, who) }),
    });
    sized.push(
      ...['today', 'anytime', 'upcoming', 'overview', 'logbook'].map(view),
      {
        ...common,
        id: `search@${size}`,
        op: `GET /v1/search?q=${SEARCH_TERM}`,
        label: `GET /v1/search (${size})`,
        needs: 'todos',
        build: (a, who) => ({ method: 'GET', path: () => `/v1/search?q=${SEARCH_TERM}`, headers: headersFor(a, who) }),
      },
      {
        ...common,
        id: `filter@${size}`,
        op: `GET /v1/filters/{id}/todos (${FILTER_CRITERIA})`,
        label: `GET /v1/filters/{id}/todos (${size})`,
        needs: 'filter',
        build: (a, who) => ({ method: 'GET', path: () => `/v1/filters/${a.filterId}/todos`, headers: headersFor(a, who) }),
      },
    );
  }
  return [...core, ...tags, ...sized];
}

export function sizedAccount(size: number): string {
  return `k${size}`;
}
