export * from './accounts.js';
export * from './content.js';
export * from './tasks.js';
export * from './outbox.js';
export * from './idempotency.js';
export * from './notes.js';
export * from './instance.js';
export * from './todo-index.js';
