// `npm run build` (and prestart): bundles the /app console's script to dist/console/app.js with the
// compiled rest/console/bundle.js (run after tsc). Plain Node.
import { writeConsoleBundle } from '../dist/rest/console/bundle.js';

console.log(`Console bundled: ${writeConsoleBundle()}`);
