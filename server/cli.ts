// `npm run cli -- <command>`: local administration against DATA_DIR, through the same models the
// API uses (DECISIONS §2). Passwords come from CAIRN_PASSWORD, stdin, or a prompt without echo;
// never from a flag (it would show in the process list).
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadConfig } from './config.js';
import { openDb, closeDb } from '../db/client.js';
import { deriveServerKeys, loadMasterKey } from './crypto/master-key.js';
import { createLogger } from './logger.js';
import { systemClock } from './clock.js';
import type { Deps } from './deps.js';
import { AppError } from './errors.js';
import { authenticate } from './auth/credentials.js';
import { login, register } from '../routers/auth/model.js';
import { createKey } from '../routers/keys/model.js';
import { CreateKeyInput } from '../routers/keys/schema.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  user add --email <email>                 create an account (password: prompt, stdin or CAIRN_PASSWORD)
  login --email <email>                    print a first-party session token
  token create --email <email> --scopes <a,b> [--days 30|90|180|365] [--name <name>]
                                           create a personal access token (shown once)

Environment: DATA_DIR (default ./data), CAIRN_MASTER_KEY, CAIRN_PASSWORD.`;

async function readPassword(prompt: string): Promise<string> {
  if (process.env.CAIRN_PASSWORD) return process.env.CAIRN_PASSWORD;
  if (!process.stdin.isTTY) {
    let data = '';
    for await (const chunk of process.stdin) data += chunk;
    return data.replace(/\r?\n$/, '');
  }
  let muted = false;
  const out = new Writable({
    write(chunk, _enc, cb) {
      if (!muted) process.stderr.write(chunk);
      cb();
    },
  });
  const rl = createInterface({ input: process.stdin, output: out, terminal: true });
  process.stderr.write(prompt);
  muted = true;
  const answer = await new Promise<string>((resolve) => rl.question('', resolve));
  rl.close();
  process.stderr.write('\n');
  return answer;
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new Error(`missing --${flag}\n\n${USAGE}`);
  return value;
}

async function run(argv: string[], deps: Deps): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      scopes: { type: 'string' },
      days: { type: 'string', default: '90' },
      name: { type: 'string', default: 'cli' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const cmd = positionals.join(' ');
  if (values.help || !cmd) {
    console.log(USAGE);
    return;
  }
  switch (cmd) {
    case 'user add': {
      const email = need(values.email, 'email');
      const r = await register({ ...deps, config: { ...deps.config, allowSignup: true } }, { email, password: await readPassword('Password: ') });
      console.log(JSON.stringify({ user: r.user }, null, 2));
      return;
    }
    case 'login': {
      const r = await login(deps, { email: need(values.email, 'email'), password: await readPassword('Password: ') });
      console.log(r.token);
      return;
    }
    case 'token create': {
      const input = CreateKeyInput.parse({
        name: values.name,
        scopes: need(values.scopes, 'scopes').split(',').map((s) => s.trim()).filter(Boolean),
        expiresInDays: Number(values.days),
      });
      const session = await login(deps, { email: need(values.email, 'email'), password: await readPassword('Password: ') });
      const principal = await authenticate(deps, `Bearer ${session.token}`);
      const key = createKey(deps, principal, input);
      console.log(JSON.stringify(key, null, 2));
      return;
    }
    default:
      throw new Error(`unknown command "${cmd}"\n\n${USAGE}`);
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  const db = openDb(config.dbFile, { durability: config.durability });
  const deps: Deps = {
    db,
    config,
    keys: deriveServerKeys(loadMasterKey(config.dataDir, config.masterKeyHex)),
    clock: systemClock,
    log: createLogger('silent'),
  };
  try {
    await run(process.argv.slice(2), deps);
  } finally {
    closeDb(db);
  }
}

main().catch((err) => {
  const msg = err instanceof AppError ? `${err.problemCode}: ${err.detail}` : err instanceof Error ? err.message : String(err);
  console.error(msg);
  process.exit(1);
});
