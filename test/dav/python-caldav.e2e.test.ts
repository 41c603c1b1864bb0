// Issue 30 "Done means": Debian's python3-caldav against a real server process on loopback:
// discovery from the server root, listing calendars and to-dos, adding and completing a to-do,
// a change made through /v1, then listing again and an incremental sync by token. Skipped, with the
// reason printed, only when the module is missing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../helpers/process.js';
import { call } from '../helpers/http.js';
import { davUser, type DavUser } from './helpers.js';

// Debian's interpreter first: python3-caldav installs into its dist-packages.
const PYTHON = ['/usr/bin/python3', 'python3'].find((py) => {
  try {
    execFileSync(py, ['-c', 'import caldav'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});
if (!PYTHON) console.log('skipping the python3-caldav run: the caldav module is not installed (apt-get install python3-caldav)');

const SCRIPT = `
import json, sys, caldav
url, user, password, phase, state = sys.argv[1:6]
client = caldav.DAVClient(url=url, username=user, password=password)
principal = client.principal()
cals = {c.name: c for c in principal.calendars()}
garden = cals["Garden"]
out = {"calendars": sorted(cals.keys())}
def summaries(todos):
    return sorted(str(t.vobject_instance.vtodo.summary.value) for t in todos)
if phase == "1":
    out["open"] = summaries(garden.todos())
    garden.save_todo("BEGIN:VCALENDAR\\r\\nVERSION:2.0\\r\\nPRODID:-//py//EN\\r\\nBEGIN:VTODO\\r\\nUID:py-1@host\\r\\nSUMMARY:Order compost\\r\\nEND:VTODO\\r\\nEND:VCALENDAR\\r\\n")
    for t in garden.todos():
        if t.vobject_instance.vtodo.summary.value == "Prune roses":
            t.complete()
    out["after"] = summaries(garden.todos())
    out["all"] = summaries(garden.todos(include_completed=True))
    sync = garden.objects_by_sync_token(load_objects=False)
    open(state, "w").write(sync.sync_token)
else:
    out["open"] = summaries(garden.todos())
    sync = garden.objects_by_sync_token(sync_token=open(state).read(), load_objects=True)
    out["changed"] = sorted(str(o.vobject_instance.vtodo.summary.value) for o in sync if o.data)
print(json.dumps(out))
`;

describe.skipIf(!PYTHON)('python3-caldav', () => {
  let dir: string;
  let server: ServerProcess;
  let u: DavUser;
  let projectId: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-pycaldav-'));
    mkdirSync(path.join(dir, 'data'));
    writeFileSync(path.join(dir, 'client.py'), SCRIPT);
    server = await startServerProcess(path.join(dir, 'data'));
    u = await davUser(server);
    projectId = (await call(server, 'POST', '/v1/containers', { token: u.session, body: { kind: 'project', name: 'Garden' } })).body.id;
    await call(server, 'POST', '/v1/todos', { token: u.session, body: { title: 'Prune roses', parentId: projectId } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const py = (phase: string) => {
    try {
      return JSON.parse(execFileSync(PYTHON!, [path.join(dir, 'client.py'), `${server.url}/dav/`, u.email, u.token, phase, path.join(dir, 'token')], { encoding: 'utf8', timeout: 60_000 })) as Record<string, string[]>;
    } catch (e) {
      throw new Error(`python3-caldav phase ${phase}: ${(e as { stderr?: string }).stderr}\n${server.output().slice(-3000)}`);
    }
  };

  it('lists, adds, completes, and sees a /v1 change in a list and an incremental sync', async () => {
    const one = py('1');
    expect(one.calendars).toEqual(['Garden', 'To-dos']);
    expect(one.open).toEqual(['Prune roses']);
    expect(one.after).toEqual(['Order compost']);
    expect(one.all).toEqual(['Order compost', 'Prune roses']);
    const todos = (await call(server, 'GET', `/v1/todos?parent_id=${projectId}`, { token: u.session })).body.data as { id: string; title: string; status: string }[];
    expect(todos.find((t) => t.title === 'Prune roses')!.status).toBe('completed');
    const compost = todos.find((t) => t.title === 'Order compost')!;
    await call(server, 'PATCH', `/v1/todos/${compost.id}`, { token: u.session, body: { title: 'Order two bags of compost' } });
    const two = py('2');
    expect(two.open).toEqual(['Order two bags of compost']);
    expect(two.changed).toEqual(['Order two bags of compost']);
  }, 120_000);
});
