// `npm run build` (and prestart): bundles the /app console's script to dist/console/app.js with the
// compiled server/console/bundle.js (run after tsc). Plain Node.
import { writeConsoleBundle } from '../dist/server/console/bundle.js';

console.log(`Console bundled: ${writeConsoleBundle()}`);
