// Test-only: a deliberate per-request leak, to prove that test/reliability/load.test.ts catches
// one (LOAD_INJECT_LEAK=<bytes> preloads this into the server with NODE_OPTIONS=--require). Every
// request the server's http.Server emits keeps a string of LOAD_INJECT_LEAK bytes forever, as a
// Map of per-request state that is never cleared would. Never loaded otherwise.
const http = require('node:http');
const { randomBytes } = require('node:crypto');
const bytes = Number(process.env.LOAD_INJECT_LEAK) || 2048;
const kept = [];
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, ...args) {
  // A flat string (hex of random bytes): 'x'.repeat(n) would be a tree of shared rope nodes.
  if (event === 'request') kept.push(randomBytes(bytes / 2).toString('hex'));
  return emit.call(this, event, ...args);
};
