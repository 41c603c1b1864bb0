// `npm run build` (and prestart): bundles the web app (app/src/) to dist/app/main.js and main.css
// with the compiled app/serve.js (run after tsc). Plain Node.
import { writeAppBundle } from '../dist/app/serve.js';

console.log(`Web app bundled: ${writeAppBundle()}`);
