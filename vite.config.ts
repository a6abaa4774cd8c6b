import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The renderer: built into dist/renderer and served by the desktop host's shells.
// Screens are split by their dynamic imports (renderer/src/app/screens.ts); the charting
// library and its dependencies get chunks of their own, fetched only by the screens that chart,
// and React its own, which every page needs and which changes less often than the console.
export default defineConfig({
  root: 'renderer',
  base: './',
  plugins: [react()],
  build: {
    outDir: '../dist/renderer',
    emptyOutDir: true,
    sourcemap: true,
    rolldownOptions: {
      output: {
        codeSplitting: {
          groups: [
            { name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/, priority: 2 },
            {
              name: 'charts',
              test: /[\\/]node_modules[\\/](recharts|d3-[^\\/]+|victory-vendor|decimal\.js-light|es-toolkit|@reduxjs|redux|reselect|immer|react-redux|use-sync-external-store|eventemitter3|tiny-invariant|clsx)[\\/]/,
              priority: 1,
            },
          ],
        },
      },
    },
  },
});
