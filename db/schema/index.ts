export * from './accounts.js';
export * from './content.js';
