// Component tests: a clean DOM and fetch after each test.
import { cleanup, configure } from '@testing-library/react';
import { afterEach, vi } from 'vitest';

// The first render of a file compiles the whole app: give findBy*/waitFor room on a busy machine.
configure({ asyncUtilTimeout: 5_000 });

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

// jsdom lays nothing out: every element measures 0 × 0, and a virtualised list shows no row. Give
// elements a viewport's size (the virtualiser reads its scroller's clientWidth/clientHeight).
for (const [property, size] of [['clientHeight', 800], ['clientWidth', 1200], ['offsetHeight', 800], ['offsetWidth', 1200]] as const) {
  Object.defineProperty(HTMLElement.prototype, property, { configurable: true, get: () => size });
}
