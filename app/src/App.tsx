// The shell: signed out, the sign-in (and, when sign-up is on, register) form; signed in, the
// sidebar (a navigation landmark), the search box, the current view, the shortcuts. Routing is the
// URL's fragment (`#/today`, `#/project/<id>`, `#/settings`), so a reload stays on its view; the
// authorize page's `#code=123456789` opens Settings at the approval of that code.
import { lazy, Suspense, useEffect, useMemo, useRef, useState, useSyncExternalStore, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, getToken, message, onToken, setToken, localToday, status } from './api.js';
import { useLive } from './live.js';
import { Views } from './views/index.js';
import { dropInto } from './views/project.js';
import { isTyping, type Route } from './views/shared.js';
import { NotesNav } from './views/notes.js';
import { FiltersNav } from './views/filters.js';

// Settings is a chunk of its own, loaded when first opened (docs/app.md "Serving").
// A failed load (offline before it was ever fetched) says so instead of taking the app down.
const Settings = lazy(() =>
  import('./Settings.js').then(
    (m) => ({ default: m.Settings }),
    () => ({ default: () => <p role="alert">Settings could not be loaded: reload when the server can be reached.</p> }),
  ),
);

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  if (/^code=\d/.test(h)) return { view: 'settings' };
  const [view, arg] = h.split('/');
  switch (view) {
    case 'inbox': case 'today': case 'upcoming': case 'anytime': case 'someday': case 'logbook': case 'trash': case 'settings':
      return { view };
    case 'project': case 'area':
      return arg ? { view, id: decodeURIComponent(arg) } : { view: 'today' };
    case 'notes':
      return arg ? { view: 'folder', id: decodeURIComponent(arg) } : { view: 'notes' };
    case 'filters':
      return arg ? { view: 'filter', id: decodeURIComponent(arg) } : { view: 'filters' };
    case 'search':
      return { view: 'search', q: decodeURIComponent(arg ?? '') };
    default:
      return { view: 'today' };
  }
}

function useHash(): string {
  return useSyncExternalStore(
    (cb) => {
      addEventListener('hashchange', cb);
      return () => removeEventListener('hashchange', cb);
    },
    () => location.hash,
  );
}

function useOnline(): boolean {
  return useSyncExternalStore(
    (cb) => {
      addEventListener('online', cb);
      addEventListener('offline', cb);
      return () => {
        removeEventListener('online', cb);
        removeEventListener('offline', cb);
      };
    },
    () => navigator.onLine,
  );
}

/** No HTTP answer at all (the fetch itself failed: no network, no server), as opposed to a problem the server sent. */
function networkError(err: unknown): boolean {
  const e = err as { data?: unknown; cause?: unknown } | null;
  return !!e && e.data === undefined && (err instanceof TypeError || e.cause instanceof TypeError);
}

/**
 * The browser may say it is online while the server cannot be reached: a query or a change whose
 * fetch failed shows the offline notice (not a silent empty view). Meanwhile the views on screen
 * are asked again every RETRY_DOWN_MS (and when the browser says it is back online); the first
 * answer clears the notice and the queries still failed are asked again.
 */
const RETRY_DOWN_MS = 3_000;
function useUnreachable(): boolean {
  const qc = useQueryClient();
  const [down, setDown] = useState(false);
  const wasDown = useRef(false);
  useEffect(() => {
    if (!down) return;
    // The views on screen (one batched request): a failed change leaves no failed query behind.
    const retry = () => void qc.refetchQueries({ type: 'active' });
    const timer = setInterval(retry, RETRY_DOWN_MS);
    addEventListener('online', retry);
    return () => {
      clearInterval(timer);
      removeEventListener('online', retry);
    };
  }, [down, qc]);
  useEffect(() => {
    const failed = (err: unknown) => {
      if (!networkError(err)) return;
      wasDown.current = true;
      setDown(true);
    };
    const offQueries = qc.getQueryCache().subscribe((e) => {
      if (e.type !== 'updated') return;
      if (e.action.type === 'error') failed(e.action.error);
      else if (e.action.type === 'success' && !e.action.manual && wasDown.current) {
        wasDown.current = false;
        setDown(false);
        void qc.refetchQueries({ type: 'active', predicate: (q) => q.state.status === 'error' });
      }
    });
    const offMutations = qc.getMutationCache().subscribe((e) => {
      if (e.type === 'updated' && e.action.type === 'error') failed(e.action.error);
    });
    return () => {
      offQueries();
      offMutations();
    };
  }, [qc]);
  return down;
}

export function App() {
  const token = useSyncExternalStore(onToken, getToken);
  const online = useOnline();
  const unreachable = useUnreachable();
  return (
    <>
      {!online && <p role="status" className="offline">You are offline: changes cannot be saved until the connection is back.</p>}
      {online && unreachable && <p role="status" className="offline">You are offline or the server cannot be reached: changes cannot be saved until it answers again.</p>}
      {token ? <SignedIn /> : <SignIn />}
    </>
  );
}

function SignIn() {
  const [error, setError] = useState('');
  // Public (docs/app.md "Sign-up"): whether this server takes new accounts.
  const info = useQuery({
    queryKey: ['well-known'],
    queryFn: async () => (await (await fetch('/.well-known/cairn', { headers: { accept: 'application/json' } })).json()) as { signup: boolean },
  });
  const email = useRef<HTMLInputElement>(null);
  const password = useRef<HTMLInputElement>(null);
  const signIn = useMutation({
    mutationFn: (v: { email: string; password: string }) => api.auth.login.mutate(v),
    onSuccess: (s) => setToken(s.token),
    onError: (e) => setError(message(e)),
  });
  const register = useMutation({
    mutationFn: (v: { email: string; password: string }) => api.auth.register.mutate(v),
    onSuccess: (s) => setToken(s.token),
    onError: (e) => setError(message(e)),
  });
  const values = () => ({ email: email.current!.value, password: password.current!.value });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    setError('');
    signIn.mutate(values());
  };
  return (
    <main>
      <form className="signin" id="signin-form" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Cairn</h1>
        <label>
          Email <input type="email" id="email" ref={email} autoComplete="username" required />
        </label>
        <label>
          Password <input type="password" id="password" ref={password} autoComplete="current-password" required />
        </label>
        <div className="buttons">
          <button type="submit" id="signin-button" className="primary">Sign in</button>
          {info.data?.signup && (
            <button
              type="button"
              onClick={() => {
                if (!email.current!.reportValidity() || !password.current!.reportValidity()) return;
                setError('');
                register.mutate(values());
              }}
            >
              Create account
            </button>
          )}
        </div>
        {info.data && !info.data.signup && <p>Sign-up is turned off on this server: ask its owner for an account.</p>}
        {error && <p role="alert" id="signin-status">{error}</p>}
      </form>
    </main>
  );
}

const FIXED: { view: Route['view']; name: string; key: string }[] = [
  { view: 'inbox', name: 'Inbox', key: '1' },
  { view: 'today', name: 'Today', key: '2' },
  { view: 'upcoming', name: 'Upcoming', key: '3' },
  { view: 'anytime', name: 'Anytime', key: '4' },
  { view: 'someday', name: 'Someday', key: '5' },
  { view: 'logbook', name: 'Logbook', key: '6' },
  { view: 'trash', name: 'Trash', key: '' },
];

function SignedIn() {
  const hash = useHash();
  const route = parseRoute(hash);
  const qc = useQueryClient();
  const [error, setError] = useState('');
  const [palette, setPalette] = useState(false);
  const [help, setHelp] = useState(false);
  const search = useRef<HTMLInputElement>(null);
  useLive();
  const containers = useQuery({ queryKey: ['containers'], queryFn: () => api.containers.list.query({ limit: 200 }) });
  // A credential that stopped working (signed out elsewhere, password changed): back to sign-in.
  useEffect(() => {
    if (status(containers.error) === 401) setToken(undefined);
  }, [containers.error]);
  const all = containers.data?.data ?? [];
  // A completed (archived) project or area leaves the sidebar (docs/app.md "Projects, headings and drag").
  const areas = all.filter((c) => c.kind === 'area' && c.status !== 'archived');
  const projects = all.filter((c) => c.kind !== 'area' && c.status !== 'archived');
  // A to-do dropped on a sidebar project moves into it (at its end, no heading).
  const moveInto = useMutation({
    mutationFn: (v: { id: string; parentId: string }) => api.todos.move.mutate(v),
    onError: (e) => setError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const signOut = useMutation({
    mutationFn: () => api.auth.logout.mutate(),
    onSettled: () => {
      setToken(undefined);
      qc.clear();
      history.replaceState(null, '', location.pathname);
    },
  });

  // Global shortcuts (docs/app.md "Keyboard"): none fires while typing in a field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const typing = isTyping(e.target as HTMLElement);
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setPalette(true);
        return;
      }
      if (e.key === 'Escape') {
        setPalette(false);
        setHelp(false);
        return;
      }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      const fixed = FIXED.find((f) => f.key && f.key === e.key);
      if (fixed) {
        e.preventDefault();
        location.hash = `#/${fixed.view}`;
      } else if (e.key === '/') {
        e.preventDefault();
        search.current?.focus();
      } else if (e.key === '?') {
        e.preventDefault();
        setHelp(true);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const title = route.view === 'project' || route.view === 'area' ? (all.find((c) => c.id === route.id)?.name ?? '') : route.view === 'settings' ? 'Settings' : route.view === 'search' ? 'Search' : route.view === 'notes' || route.view === 'folder' ? 'Notes' : route.view === 'filters' || route.view === 'filter' ? 'Filters' : FIXED.find((f) => f.view === route.view)?.name;
  useEffect(() => {
    document.title = title ? `${title} · Cairn` : 'Cairn';
  }, [title]);

  const link = (href: string, name: string, current: boolean, dropTo?: string) => (
    <li key={href}>
      <a href={href} aria-current={current ? 'page' : undefined} {...(dropTo ? dropInto(dropTo, (id) => moveInto.mutate({ id, parentId: dropTo })) : {})}>
        {name}
      </a>
    </li>
  );
  return (
    <div className="shell" id="signed-in">
      <nav className="side" aria-label="Lists">
        <ul>{FIXED.map((f) => link(`#/${f.view}`, f.name, route.view === f.view))}</ul>
        {projects.filter((p) => !p.parentId || !all.some((a) => a.id === p.parentId)).length > 0 && (
          <ul aria-label="Projects">{projects.filter((p) => !p.parentId || !all.some((a) => a.id === p.parentId)).map((p) => link(`#/project/${p.id}`, p.name, route.view === 'project' && route.id === p.id, p.id))}</ul>
        )}
        {areas.map((a) => (
          <ul key={a.id} aria-label={a.name}>
            {link(`#/area/${a.id}`, a.name, route.view === 'area' && route.id === a.id)}
            {projects.filter((p) => p.parentId === a.id).map((p) => link(`#/project/${p.id}`, p.name, route.view === 'project' && route.id === p.id, p.id))}
          </ul>
        ))}
        <NewContainer kind="project" onError={setError} areas={areas} />
        <NewContainer kind="area" onError={setError} />
        <NotesNav route={route} />
        <FiltersNav route={route} />
        <ul>{link('#/settings', 'Settings', route.view === 'settings')}</ul>
      </nav>
      <div>
        <div className="top">
          <form
            role="search"
            onSubmit={(ev) => {
              ev.preventDefault();
              const q = search.current!.value.trim();
              if (q) location.hash = `#/search/${encodeURIComponent(q)}`;
            }}
          >
            <input type="search" ref={search} aria-label="Search" placeholder="Search ( / )" />
          </form>
          <span className="spacer" />
          <button type="button" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts">?</button>
          <button type="button" id="signout" onClick={() => signOut.mutate()}>Sign out</button>
        </div>
        <main>
          {error && (
            <p role="alert" className="alert">
              {error} <button type="button" onClick={() => setError('')}>Dismiss</button>
            </p>
          )}
          {route.view === 'settings' ? (
            <Suspense fallback={<p role="status">Loading…</p>}>
              <Settings onError={setError} />
            </Suspense>
          ) : <Views route={route} title={title ?? ''} containers={all} onError={setError} />}
        </main>
      </div>
      {palette && <Palette projects={all.map((c) => ({ id: c.id, name: c.name, kind: c.kind }))} onClose={() => setPalette(false)} />}
      {help && <Shortcuts onClose={() => setHelp(false)} />}
    </div>
  );
}

/**
 * A new project (at the top level or in the area chosen beside it) or a new area (it holds
 * projects only, spec §2.1), named in the sidebar's field (Enter); the app opens its page.
 */
function NewContainer({ kind, onError, areas = [] }: { kind: 'project' | 'area'; onError: (m: string) => void; areas?: { id: string; name: string }[] }) {
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const [area, setArea] = useState('');
  const create = useMutation({
    mutationFn: (n: string) => api.containers.create.mutate(kind === 'area' ? { kind, name: n } : { kind, name: n, parentId: areas.some((a) => a.id === area) ? area : null }),
    onSuccess: (c) => {
      setName('');
      location.hash = `#/${kind}/${c.id}`;
    },
    onError: (e) => onError(message(e)),
    onSettled: () => qc.invalidateQueries(),
  });
  const label = kind === 'area' ? 'New area' : 'New project';
  return (
    <form
      className="new-container"
      onSubmit={(e) => {
        e.preventDefault();
        if (name.trim()) create.mutate(name.trim());
      }}
    >
      <input type="text" aria-label={label} placeholder={label} value={name} onChange={(e) => setName(e.target.value)} maxLength={256} />
      {kind === 'project' && areas.length > 0 && (
        <select aria-label="Area of the new project" value={area} onChange={(e) => setArea(e.target.value)}>
          <option value="">No area</option>
          {areas.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      )}
    </form>
  );
}

/** Ctrl/⌘+K: go to a view or project by typing part of its name. */
function Palette({ projects, onClose }: { projects: { id: string; name: string; kind: string }[]; onClose: () => void }) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const items = useMemo(() => {
    const all = [...FIXED.map((f) => ({ name: f.name, href: `#/${f.view}` })), { name: 'Settings', href: '#/settings' }, ...projects.map((p) => ({ name: p.name, href: `#/${p.kind === 'area' ? 'area' : 'project'}/${p.id}` }))];
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const hits = all.filter((i) => words.every((w) => i.name.toLowerCase().includes(w)));
    if (q.trim()) hits.push({ name: `Search for “${q.trim()}”`, href: `#/search/${encodeURIComponent(q.trim())}` });
    return hits;
  }, [q, projects]);
  const go = (href: string) => {
    location.hash = href;
    onClose();
  };
  return (
    <div role="dialog" aria-modal="true" aria-label="Command palette" className="modal">
      <input
        type="text"
        autoFocus
        aria-label="Go to"
        value={q}
        onChange={(e) => {
          setQ(e.target.value);
          setActive(0);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') setActive((a) => Math.min(a + 1, items.length - 1));
          else if (e.key === 'ArrowUp') setActive((a) => Math.max(a - 1, 0));
          else if (e.key === 'Enter' && items[active]) go(items[active].href);
          else if (e.key === 'Escape') onClose();
        }}
      />
      <ul aria-label="Matches">
        {items.slice(0, 12).map((i, n) => (
          <li key={i.href} className={n === active ? 'active' : ''}>
            <button type="button" onClick={() => go(i.href)}>{i.name}</button>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Every shortcut the app has (docs/app.md "Keyboard"): App.tsx, views/index.tsx, project.tsx, editor.tsx. */
export const SHORTCUTS: [string, string][] = [
  ['n', 'New to-do (focus quick entry)'],
  ['x', 'Complete or reopen the selected to-do'],
  ['t', 'Selected to-do: When Today'],
  ['e', 'Selected to-do: This Evening'],
  ['s', 'Selected to-do: Someday'],
  ['d', 'Selected to-do: open it at its deadline'],
  ['m', 'Selected to-do: move it (open it at its project; Tab on to its heading)'],
  ['Enter', 'Open the selected to-do'],
  ['1–6', 'Inbox, Today, Upcoming, Anytime, Someday, Logbook'],
  ['j / k', 'Next / previous to-do'],
  ['Ctrl/⌘+↑ / ↓', 'Move the selected to-do up / down its list; on a project page, at a heading’s first / last row, into the heading above / below'],
  ['Alt+↑ / ↓', 'In a checklist item: move the item up / down'],
  ['/', 'Search'],
  ['Ctrl/⌘+K', 'Command palette (quick find); ↑ / ↓ pick, Enter goes'],
  ['Enter / Esc', 'In a rename field (heading, checklist item): save / put the name back'],
  ['?', 'This list'],
  ['Esc', 'Close the palette or this list'],
];

function Shortcuts({ onClose }: { onClose: () => void }) {
  return (
    <div role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" className="modal">
      <h2>Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([k, v]) => (
          <div key={k}>
            <dt><kbd>{k}</kbd></dt>
            <dd>{v}</dd>
          </div>
        ))}
      </dl>
      <button type="button" autoFocus onClick={onClose}>Close</button>
    </div>
  );
}

export { localToday };
