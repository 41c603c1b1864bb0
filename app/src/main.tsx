// The Cairn web app (issue 32; docs/app.md): React 19 and TanStack Query 5 on the project's typed
// client. Mounted into the static shell app/serve.ts serves; styles from style.css (no inline
// style or script: the CSP forbids them).
import './style.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { queryClient } from './api.js';
import { App } from './App.js';

// The service worker (app/src/sw.ts; docs/app.md "Installable and offline"): the app shell only,
// never an API answer. Scope /app (the shell's own path; app/serve.ts allows it with a header).
if ('serviceWorker' in navigator) {
  addEventListener('load', () => {
    navigator.serviceWorker.register('/app/sw.js', { scope: '/app' }).catch((e: unknown) => console.warn('Cairn: no offline shell:', e));
  });
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
