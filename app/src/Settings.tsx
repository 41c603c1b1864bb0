// Settings (issue 32 item 1; docs/app.md "Settings"): the account (change password, rotate the
// key, revoke all) and what the console did before it (docs/oauth.md "The console"): approve a
// code with its context, warning and the other-network confirmation; connected apps; personal
// tokens and app passwords with their audience. The element ids are the console's, so the OAuth
// browser tests and the authorize page's link `/app#code=…` keep working.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, message, setToken, type Out } from './api.js';

const SCOPES = ['todos:read', 'todos:write', 'containers:read', 'containers:write', 'notes:read', 'notes:write', 'inbox:read', 'inbox:write', 'tags:read', 'tags:write', 'attachments:read', 'attachments:write', 'filters:read', 'filters:write', 'settings:read', 'settings:write', 'sessions:read', 'sessions:write', 'webhooks:write', 'tasks:read', 'tasks:write'] as const;
type Scope = (typeof SCOPES)[number];
const DOOR_NAMES: Record<'rest' | 'dav' | 'mcp', string> = { rest: 'API', dav: 'CalDAV (app password)', mcp: 'assistant (/mcp)' };

export function Settings({ onError }: { onError: (m: string) => void }) {
  return (
    <div className="settings">
      <h1>Settings</h1>
      <Approve />
      <Grants />
      <Keys />
      <Account onError={onError} />
      <WeekStartSetting onError={onError} />
    </div>
  );
}

/** The first day of the week (`settings.weekStart`): the editor's weekday order, `next week` in quick entry. */
const WEEK_DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
function WeekStartSetting({ onError }: { onError: (m: string) => void }) {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['settings'], queryFn: () => api.settings.get.query(), staleTime: 60_000 });
  const save = useMutation({
    mutationFn: (weekStart: (typeof WEEK_DAYS)[number]) => api.settings.update.mutate({ weekStart }),
    onSuccess: (s) => qc.setQueryData(['settings'], s),
    onError: (e) => onError(message(e)),
  });
  return (
    <section aria-labelledby="week-h">
      <h2 id="week-h">Calendar</h2>
      <label>
        First day of the week{' '}
        <select value={save.isPending ? save.variables : (q.data?.weekStart ?? 'monday')} disabled={!q.data} onChange={(e) => save.mutate(e.target.value as (typeof WEEK_DAYS)[number])}>
          {WEEK_DAYS.map((d) => (
            <option key={d} value={d}>
              {d[0]!.toUpperCase() + d.slice(1)}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}

function Approve() {
  const qc = useQueryClient();
  const fromHash = /code=(\d{9})/.exec(location.hash)?.[1];
  const [code, setCode] = useState(fromHash ?? '');
  const [approval, setApproval] = useState<Out['approvals']['get'] | undefined>();
  const [granted, setGranted] = useState<string[]>([]);
  const [confirmOther, setConfirmOther] = useState(false);
  const [statusText, setStatus] = useState<{ text: string; error: boolean }>({ text: '', error: false });
  const lookUp = async (c: string) => {
    setApproval(undefined);
    try {
      const a = await api.approvals.get.query({ code: c });
      setApproval(a);
      setGranted([...a.scopes]);
      setConfirmOther(false);
      setStatus({ text: '', error: false });
    } catch (e) {
      setStatus({ text: message(e), error: true });
    }
  };
  // /app#code=123456789 (the authorize page links here): look the code up once signed in.
  useEffect(() => {
    if (fromHash) void lookUp(fromHash);
  }, []);
  const decide = async (approve: boolean) => {
    if (!approval) return;
    try {
      const other = approval.confirmOtherNetworkRequired && confirmOther;
      const out = approve
        ? await api.approvals.approve.mutate({ code: approval.code, scopes: granted as Scope[], ...(other ? { confirmOtherNetwork: true } : {}) })
        : await api.approvals.deny.mutate({ code: approval.code });
      setApproval(undefined);
      // The code is decided: out of the address bar, so a reload does not look it up again.
      history.replaceState(null, '', `${location.pathname}#/settings`);
      setCode('');
      setStatus({ text: out.decision === 'approved' ? `Approved (${out.scopes.join(' ')}). The other page continues by itself.` : 'Denied.', error: false });
      await qc.invalidateQueries({ queryKey: ['grants'] });
    } catch (e) {
      setStatus({ text: message(e), error: true });
    }
  };
  return (
    <section aria-labelledby="approve-h">
      <h2 id="approve-h">Approve an app</h2>
      <form
        id="code-form"
        onSubmit={(e) => {
          e.preventDefault();
          void lookUp(code);
        }}
      >
        <label>
          Code shown on the app's page <input type="text" id="code" inputMode="numeric" autoComplete="off" placeholder="123-456-789" value={code} onChange={(e) => setCode(e.target.value)} />
        </label>
        <button type="submit" id="lookup">Look up</button>
      </form>
      <div id="approval" hidden={!approval}>
        {approval && (
          <>
            <p className="warning" id="approval-warning">{approval.warning}</p>
            <p id="approval-started">{approval.startedFrom.summary}</p>
            <p>
              App name given at registration: <strong id="approval-app">{approval.client.name}</strong> <span className="badge">unverified</span>
            </p>
            <p>
              The app's page returns to <span id="approval-callback" className="callback">{approval.redirectUri}</span> (this does not show who started the request)
            </p>
            <p>Grant these scopes (untick to grant fewer):</p>
            <div id="approval-scopes">
              {approval.scopes.map((s) => (
                <label key={s}>
                  <input type="checkbox" name="grant" value={s} checked={granted.includes(s)} onChange={(e) => setGranted((g) => (e.target.checked ? [...g, s] : g.filter((x) => x !== s)))} /> {s}
                </label>
              ))}
            </div>
            <p id="approval-other-network" hidden={!approval.confirmOtherNetworkRequired}>
              <label>
                <input type="checkbox" id="confirm-other-network" checked={confirmOther} onChange={(e) => setConfirmOther(e.target.checked)} />{' '}
                <span id="approval-other-network-text">
                  This request comes from another network ({approval.startedFrom.network}) than yours ({approval.yourNetwork}). I started it myself there, for example on my phone on mobile data; nobody gave me this code.
                </span>
              </label>
            </p>
            <button type="button" id="approve" className="primary" disabled={approval.confirmOtherNetworkRequired && !confirmOther} onClick={() => void decide(true)}>Approve</button>{' '}
            <button type="button" id="deny" onClick={() => void decide(false)}>Deny</button>
          </>
        )}
      </div>
      <p id="approve-status" className={statusText.error ? 'error' : ''} role={statusText.error ? 'alert' : undefined}>{statusText.text}</p>
    </section>
  );
}

function Grants() {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['grants'], queryFn: () => api.grants.list.query({ limit: 200 }) });
  const revoke = useMutation({ mutationFn: (id: string) => api.grants.revoke.mutate({ id }), onSettled: () => qc.invalidateQueries({ queryKey: ['grants'] }) });
  return (
    <section aria-labelledby="grants-h">
      <h2 id="grants-h">Connected apps</h2>
      <table>
        <thead>
          <tr><th>App</th><th>Scopes</th><th>Connected</th><th>Last used</th><th><span className="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody id="grants">
          {(q.data?.data ?? []).map((g) => (
            <tr key={g.id}>
              <td>{g.client.name} (unverified)</td>
              <td>{g.scopes.join(' ')}</td>
              <td>{g.createdAt.slice(0, 10)}</td>
              <td>{g.lastUsedAt?.slice(0, 16) ?? 'never'}</td>
              <td><button type="button" onClick={() => revoke.mutate(g.id)}>Disconnect</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      {q.error && <p role="alert">{message(q.error)}</p>}
    </section>
  );
}

function Keys() {
  const qc = useQueryClient();
  const q = useQuery({ queryKey: ['keys'], queryFn: () => api.keys.list.query({ limit: 200 }) });
  const [name, setName] = useState('');
  const [audience, setAudience] = useState<'rest' | 'dav' | 'mcp'>('rest');
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [days, setDays] = useState<30 | 90 | 180 | 365>(90);
  const [shown, setShown] = useState<string | undefined>();
  const [statusText, setStatus] = useState<{ text: string; error: boolean }>({ text: '', error: false });
  const revoke = useMutation({ mutationFn: (id: string) => api.keys.revoke.mutate({ id }), onSettled: () => qc.invalidateQueries({ queryKey: ['keys'] }) });
  const create = (ev: FormEvent) => {
    ev.preventDefault();
    // DECISIONS §8: an app password (dav) takes no scopes; it is granted the to-dos and lists.
    const input = audience === 'dav' ? { name, audience, expiresInDays: days } : { name, audience, scopes, expiresInDays: days };
    api.keys.create
      .mutate(input)
      .then((k) => {
        setShown(k.token);
        setStatus({ text: 'Copy it now: it is shown once.', error: false });
        void qc.invalidateQueries({ queryKey: ['keys'] });
      })
      .catch((e) => setStatus({ text: message(e), error: true }));
  };
  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">Personal tokens and app passwords</h2>
      <table>
        <thead>
          <tr><th>Name</th><th>Opens</th><th>Scopes</th><th>Expires</th><th><span className="visually-hidden">Actions</span></th></tr>
        </thead>
        <tbody id="keys">
          {(q.data?.data ?? []).map((k) => (
            <tr key={k.id}>
              <td>{k.name}</td>
              <td>{DOOR_NAMES[k.audience]}</td>
              <td>{k.scopes.join(' ')}</td>
              <td>{k.expiresAt.slice(0, 10)}</td>
              <td><button type="button" onClick={() => revoke.mutate(k.id)}>Revoke</button></td>
            </tr>
          ))}
        </tbody>
      </table>
      <p id="lists-status" role={q.error ? 'alert' : undefined}>{q.error ? message(q.error) : ''}</p>
      <h3>Create a personal token or an app password</h3>
      <form id="new-key-form" onSubmit={create}>
        <label>
          Name <input type="text" id="new-key-name" required maxLength={256} placeholder="app password for my phone" value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          For{' '}
          <select id="new-key-audience" value={audience} onChange={(e) => setAudience(e.target.value as 'rest' | 'dav' | 'mcp')}>
            <option value="rest">the API (/v1, /trpc): choose its scopes</option>
            <option value="dav">a calendar or tasks app (CalDAV app password: to-dos and lists)</option>
            <option value="mcp">an AI assistant (/mcp): choose its scopes</option>
          </select>
        </label>
        <div id="new-key-scopes" hidden={audience === 'dav'}>
          {SCOPES.map((s) => (
            <label key={s}>
              <input type="checkbox" name="key-scope" value={s} checked={scopes.includes(s)} onChange={(e) => setScopes((x) => (e.target.checked ? [...x, s] : x.filter((y) => y !== s)))} /> {s}
            </label>
          ))}
        </div>
        <label>
          Expires after{' '}
          <select id="new-key-days" value={days} onChange={(e) => setDays(Number(e.target.value) as 30 | 90 | 180 | 365)}>
            <option value="30">30 days</option>
            <option value="90">90 days</option>
            <option value="180">180 days</option>
            <option value="365">365 days</option>
          </select>
        </label>
        <button type="submit" id="new-key-create">Create</button>
      </form>
      <p id="new-key-status" className={statusText.error ? 'error' : ''} role={statusText.error ? 'alert' : undefined}>{statusText.text}</p>
      <p id="new-key-shown" hidden={!shown}>
        Your new token: <span id="new-key-secret" className="secret">{shown}</span>
      </p>
    </section>
  );
}

/** Change password and rotate key answer a fresh session for this device; the others end. */
function Account({ onError }: { onError: (m: string) => void }) {
  const qc = useQueryClient();
  const current = useRef<HTMLInputElement>(null);
  const next = useRef<HTMLInputElement>(null);
  const rotatePw = useRef<HTMLInputElement>(null);
  const [done, setDone] = useState('');
  const change = useMutation({
    mutationFn: () => api.auth.changePassword.mutate({ currentPassword: current.current!.value, newPassword: next.current!.value }),
    onSuccess: (s) => {
      setToken(s.token);
      current.current!.value = '';
      next.current!.value = '';
      setDone('Password changed. Every other session, token and connected app has been signed out.');
      void qc.invalidateQueries();
    },
    onError: (e) => onError(message(e)),
  });
  const rotate = useMutation({
    mutationFn: () => api.auth.rotateKey.mutate({ password: rotatePw.current!.value }),
    onSuccess: (s) => {
      setToken(s.token);
      rotatePw.current!.value = '';
      setDone('Key rotated: everything is sealed under a new key. Every other session, token and connected app has been signed out.');
      void qc.invalidateQueries();
    },
    onError: (e) => onError(message(e)),
  });
  const revokeAll = useMutation({
    mutationFn: () => api.auth.revokeAll.mutate(),
    onSuccess: () => {
      setToken(undefined);
      qc.clear();
    },
    onError: (e) => onError(message(e)),
  });
  return (
    <section aria-labelledby="account-h">
      <h2 id="account-h">Account</h2>
      {done && <p role="status">{done}</p>}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          change.mutate();
        }}
      >
        <h3>Change password</h3>
        <label>Current password <input type="password" ref={current} autoComplete="current-password" required /></label>
        <label>New password <input type="password" ref={next} autoComplete="new-password" required minLength={8} /></label>
        <button type="submit">Change password</button>
      </form>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          rotate.mutate();
        }}
      >
        <h3>Rotate the encryption key</h3>
        <label>Password <input type="password" ref={rotatePw} autoComplete="current-password" required aria-label="Password to rotate the key" /></label>
        <button type="submit">Rotate key</button>
      </form>
      <h3>Sign out everywhere</h3>
      <p>Ends every session, personal token and connected app of this account, this one too.</p>
      <button type="button" onClick={() => confirm('Sign out everywhere, this browser too?') && revokeAll.mutate()}>Revoke all</button>
    </section>
  );
}
