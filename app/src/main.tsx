// The Cairn web app (issue 32; docs/app.md): React 19 and TanStack Query 5 on the project's typed
// client. Mounted into the static shell app/serve.ts serves; styles from style.css (no inline
// style or script: the CSP forbids them).
import './style.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClientProvider } from '@tanstack/react-query';
import { queryClient } from './api.js';
import { App } from './App.js';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
