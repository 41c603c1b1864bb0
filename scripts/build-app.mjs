// `npm run build` (and prestart): bundles the web app (app/src/) to dist/app/main.js and main.css,
// and its service worker (app/src/sw.ts) to dist/app/sw.js, with the compiled app/serve.js (run
// after tsc). Plain Node. The hashed names, the icons, the manifest and the worker's list of what
// it caches are made from these when the server starts (app/serve.ts appAssets).
import { writeAppBundle } from '../dist/app/serve.js';

console.log(`Web app bundled: ${writeAppBundle()}`);
