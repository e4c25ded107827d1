/** The console UI's entry: mounts the app on #root. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root');
createRoot(root).render(
  <StrictMode>
    <p>Orrery</p>
  </StrictMode>,
);
