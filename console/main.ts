// The first-party web console at /app (issue 17 item 5; docs/oauth.md "The console"): sign in with
// email and password (a first-party session), approve OAuth codes with scope checkboxes, list and
// revoke personal tokens and connected apps, create a personal token (shown once). Plain DOM on the
// project's own tRPC client (client/index.ts: end-to-end types). Bundled by rest/console/bundle.ts
// and served from this origin; no inline script, no third-party asset.
import { createCairnClient } from '../client/index.js';

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const KEY = 'cairn.console.session';
let token: string | undefined = sessionStorage.getItem(KEY) ?? undefined;
const api = createCairnClient({ url: location.origin, token: () => token });

const SCOPES = ['todos:read', 'todos:write', 'containers:read', 'containers:write', 'notes:read', 'notes:write', 'inbox:read', 'inbox:write', 'tags:read', 'tags:write', 'attachments:read', 'attachments:write', 'filters:read', 'filters:write', 'settings:read', 'settings:write', 'sessions:read', 'sessions:write', 'webhooks:write', 'tasks:read', 'tasks:write'] as const;
type Scope = (typeof SCOPES)[number];

/** What a token opens, in the keys table (DECISIONS §8). */
const DOOR_NAMES: Record<'rest' | 'dav' | 'mcp', string> = { rest: 'API', dav: 'CalDAV (app password)', mcp: 'assistant (/mcp)' };

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const e = Object.assign(document.createElement(tag), props);
  for (const c of children) e.append(c);
  return e;
}

function message(err: unknown): string {
  const p = (err as { data?: { problem?: { detail?: string; title?: string; errors?: { pointer: string; message: string }[] } } })?.data?.problem;
  if (p?.errors?.length) return p.errors.map((e) => `${e.pointer}: ${e.message}`).join('; ');
  return p?.detail ?? p?.title ?? (err instanceof Error ? err.message : String(err));
}

function show(id: string, text: string, isError = false): void {
  const n = $(id);
  n.textContent = text;
  n.className = isError ? 'error' : '';
}

function scopeBoxes(container: HTMLElement, scopes: readonly string[], checked: boolean, name: string): void {
  container.replaceChildren(...scopes.map((s) => el('label', {}, el('input', { type: 'checkbox', name, value: s, checked }), ` ${s}`)));
}

function checkedScopes(container: HTMLElement): Scope[] {
  return [...container.querySelectorAll<HTMLInputElement>('input[type=checkbox]:checked')].map((i) => i.value as Scope);
}

function setSignedIn(on: boolean): void {
  $('signin').hidden = on;
  $('signed-in').hidden = !on;
  if (on) void refresh();
}

async function refresh(): Promise<void> {
  try {
    const [keys, grants] = await Promise.all([api.keys.list.query({ limit: 200 }), api.grants.list.query({ limit: 200 })]);
    $('keys').replaceChildren(
      ...keys.data.map((k) =>
        el('tr', {}, el('td', {}, k.name), el('td', {}, DOOR_NAMES[k.audience]), el('td', {}, k.scopes.join(' ')), el('td', {}, k.expiresAt.slice(0, 10)), el('td', {}, el('button', { type: 'button', textContent: 'Revoke', onclick: () => void revokeKey(k.id) }))),
      ),
    );
    $('grants').replaceChildren(
      ...grants.data.map((g) =>
        el('tr', {}, el('td', {}, `${g.client.name} (unverified)`), el('td', {}, g.scopes.join(' ')), el('td', {}, g.createdAt.slice(0, 10)), el('td', {}, g.lastUsedAt?.slice(0, 16) ?? 'never'), el('td', {}, el('button', { type: 'button', textContent: 'Disconnect', onclick: () => void revokeGrant(g.id) }))),
      ),
    );
  } catch (e) {
    show('lists-status', message(e), true);
  }
}

async function revokeKey(id: string): Promise<void> {
  await api.keys.revoke.mutate({ id }).catch((e) => show('lists-status', message(e), true));
  await refresh();
}

async function revokeGrant(id: string): Promise<void> {
  await api.grants.revoke.mutate({ id }).catch((e) => show('lists-status', message(e), true));
  await refresh();
}

let pendingCode: string | undefined;

/** Approve stays off until the other-network box is ticked, when the request needs it. */
function syncApprove(): void {
  $<HTMLButtonElement>('approve').disabled = !$('approval-other-network').hidden && !$<HTMLInputElement>('confirm-other-network').checked;
}

async function lookUp(code: string): Promise<void> {
  $('approval').hidden = true;
  try {
    const a = await api.approvals.get.query({ code });
    pendingCode = a.code;
    // Issue 28 item 1 (docs/oauth.md "Approval phishing"): the warning and where the request
    // started come first; the callback says nothing about who started it.
    $('approval-warning').textContent = a.warning;
    $('approval-started').textContent = a.startedFrom.summary;
    $('approval-callback').textContent = a.redirectUri;
    $('approval-app').textContent = a.client.name;
    scopeBoxes($('approval-scopes'), a.scopes, true, 'grant');
    $('approval-other-network').hidden = !a.confirmOtherNetworkRequired;
    $('approval-other-network-text').textContent = `This request comes from another network (${a.startedFrom.network}) than yours (${a.yourNetwork}). I started it myself there, for example on my phone on mobile data; nobody gave me this code.`;
    $<HTMLInputElement>('confirm-other-network').checked = false;
    syncApprove();
    $('approval').hidden = false;
    show('approve-status', '');
  } catch (e) {
    show('approve-status', message(e), true);
  }
}

async function decide(approve: boolean): Promise<void> {
  if (!pendingCode) return;
  try {
    const confirmOtherNetwork = !$('approval-other-network').hidden && $<HTMLInputElement>('confirm-other-network').checked;
    const out = approve
      ? await api.approvals.approve.mutate({ code: pendingCode, scopes: checkedScopes($('approval-scopes')), ...(confirmOtherNetwork ? { confirmOtherNetwork: true } : {}) })
      : await api.approvals.deny.mutate({ code: pendingCode });
    $('approval').hidden = true;
    // The code is decided: out of the address bar, so a reload does not look it up again (and fail).
    if (/code=/.test(location.hash)) history.replaceState(null, '', location.pathname + location.search);
    $<HTMLInputElement>('code').value = '';
    show('approve-status', out.decision === 'approved' ? `Approved (${out.scopes.join(' ')}). The other page continues by itself.` : 'Denied.');
    pendingCode = undefined;
    await refresh();
  } catch (e) {
    show('approve-status', message(e), true);
  }
}

function init(): void {
  scopeBoxes($('new-key-scopes'), SCOPES, false, 'key-scope');
  $('signin-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const email = $<HTMLInputElement>('email').value;
    const password = $<HTMLInputElement>('password').value;
    api.auth.login
      .mutate({ email, password })
      .then((s) => {
        token = s.token;
        sessionStorage.setItem(KEY, s.token);
        $<HTMLInputElement>('password').value = '';
        show('signin-status', '');
        setSignedIn(true);
      })
      .catch((e) => show('signin-status', message(e), true));
  });
  $('signout').addEventListener('click', () => {
    void api.auth.logout.mutate().finally(() => {
      token = undefined;
      sessionStorage.removeItem(KEY);
      setSignedIn(false);
    });
  });
  $('code-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    void lookUp($<HTMLInputElement>('code').value);
  });
  $('approve').addEventListener('click', () => void decide(true));
  $('confirm-other-network').addEventListener('change', syncApprove);
  $('deny').addEventListener('click', () => void decide(false));
  $('new-key-audience').addEventListener('change', () => {
    $('new-key-scopes').hidden = $<HTMLSelectElement>('new-key-audience').value === 'dav';
  });
  $('new-key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const days = Number($<HTMLSelectElement>('new-key-days').value) as 30 | 90 | 180 | 365;
    const audience = $<HTMLSelectElement>('new-key-audience').value as 'rest' | 'dav' | 'mcp';
    const name = $<HTMLInputElement>('new-key-name').value;
    // DECISIONS §8: an app password (dav) takes no scopes; it is granted the to-dos and lists.
    const input = audience === 'dav' ? { name, audience, expiresInDays: days } : { name, audience, scopes: checkedScopes($('new-key-scopes')), expiresInDays: days };
    api.keys.create
      .mutate(input)
      .then((k) => {
        $('new-key-secret').textContent = k.token;
        $('new-key-shown').hidden = false;
        show('new-key-status', 'Copy it now: it is shown once.');
        void refresh();
      })
      .catch((e) => show('new-key-status', message(e), true));
  });
  // /app#code=123456789 (the authorize page links here): fill the code in.
  const m = /code=(\d{9})/.exec(location.hash);
  if (m) $<HTMLInputElement>('code').value = m[1]!;
  setSignedIn(!!token);
  if (token && m) void lookUp(m[1]!);
}

init();
