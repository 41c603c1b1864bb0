// `npm run build` (and prestart): bundles the web app (app/src/) into ES module chunks and its
// stylesheet, and its service worker (app/src/sw.ts), to dist/app/bundle/ with bundle.json saying
// which file is the entry and which chunks the first view loads, using the compiled app/serve.js
// (run after tsc). Plain Node. The icons, the manifest, the shell and the worker's list of what it
// caches are made from these when the server starts (app/serve.ts appAssets).
import { writeAppBundle } from '../dist/app/serve.js';

console.log(`Web app bundled: ${writeAppBundle()}`);
