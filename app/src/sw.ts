// The web app's service worker (docs/app.md "Installable and offline"): it caches the app shell
// and nothing else, so the app opens without a network and says it is offline. The shell is the
// HTML at /app and the manifest (network first: a new deploy is picked up as soon as the server
// answers) and the files under hashed names, every script chunk (those the app imports later,
// when first used, too), stylesheet and icons (cache first: a name never changes content). Everything else, /trpc, /v1, /.well-known and any other answer, is left
// to the network untouched: no answer of the API, and so nothing decrypted, is ever stored.
//
// app/serve.ts bundles this file and prepends `var CAIRN_SHELL = {…}` with the current names
// (they carry hashes), so each deploy is a different script. The browser installs it (with every
// file of the new version in a new cache) and it waits while a page of the earlier version is open:
// that page may still import one of its own chunks, which only the earlier cache holds (the server
// now has the new ones). When the last such page has gone it takes over and deletes the caches of
// earlier versions. Meanwhile a reload gets the new shell (network first) and its files: from the
// network, or offline from the new version's cache (any hashed file is looked up in every cache of
// this worker's family before the network).
//
// Type-checked with the app (`npx tsc --noEmit -p app`, DOM lib): the few service-worker types
// it uses are declared here, since the WebWorker lib cannot share a program with the DOM one.
export {};

type Shell = {
  /** The cache's name: `cairn-shell-<hash of every name and of this script>`. */
  cache: string;
  /** Paths answered network first, the cached copy only when the network fails. */
  network: string[];
  /** Paths under hashed names, answered from the cache first. */
  hashed: string[];
};
declare const CAIRN_SHELL: Shell;

interface ExtendableEvent extends Event {
  waitUntil(p: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(r: Response | Promise<Response>): void;
}
declare const self: {
  readonly location: { readonly origin: string };
  readonly clients: { claim(): Promise<void> };
  addEventListener(type: 'install' | 'activate', listener: (e: ExtendableEvent) => void): void;
  addEventListener(type: 'fetch', listener: (e: FetchEvent) => void): void;
};

const PREFIX = 'cairn-shell-';
/** Never answered from, nor written to, the cache (the lists above hold none of them anyway). */
const NEVER = /^\/(?:trpc|v1|\.well-known)(?:\/|$)/;

self.addEventListener('install', (e) => {
  e.waitUntil(
    (async () => {
      const cache = await caches.open(CAIRN_SHELL.cache);
      await cache.addAll([...CAIRN_SHELL.network, ...CAIRN_SHELL.hashed]);
      // No skipWaiting: the first version controls at once anyway (clients.claim below), a later
      // one waits for the pages of the earlier one to go (see above).
    })(),
  );
});

self.addEventListener('activate', (e) => {
  e.waitUntil(
    (async () => {
      for (const name of await caches.keys()) if (name.startsWith(PREFIX) && name !== CAIRN_SHELL.cache) await caches.delete(name);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (e) => {
  const req = e.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin || NEVER.test(url.pathname)) return;
  const path = url.pathname === '/app/' ? '/app' : url.pathname;
  if (CAIRN_SHELL.network.includes(path)) e.respondWith(networkFirst(req, path));
  else if (CAIRN_SHELL.hashed.includes(path)) e.respondWith(cacheFirst(req, path));
  else if (path.startsWith('/app/assets/')) e.respondWith(anyVersion(req, path));
});

async function networkFirst(req: Request, path: string): Promise<Response> {
  try {
    const res = await fetch(req);
    if (res.ok) await (await caches.open(CAIRN_SHELL.cache)).put(path, res.clone());
    return res;
  } catch (err) {
    // No network (or no server): the copy from the last time it answered.
    const hit = await caches.match(path, { cacheName: CAIRN_SHELL.cache, ignoreVary: true });
    if (hit) return hit;
    throw err;
  }
}

/** A hashed file of another version (a newer one waiting to take over): any cairn cache, else the network. */
async function anyVersion(req: Request, path: string): Promise<Response> {
  for (const name of await caches.keys()) {
    if (!name.startsWith(PREFIX)) continue;
    const hit = await caches.match(path, { cacheName: name, ignoreVary: true });
    if (hit) return hit;
  }
  return fetch(req);
}

async function cacheFirst(req: Request, path: string): Promise<Response> {
  const hit = await caches.match(path, { cacheName: CAIRN_SHELL.cache, ignoreVary: true });
  if (hit) return hit;
  const res = await fetch(req);
  if (res.ok) await (await caches.open(CAIRN_SHELL.cache)).put(path, res.clone());
  return res;
}
