/**
 * The Electron shell's entry point (package.json "main", once compiled; see electron-builder.yml).
 * Everything it does is in lifecycle.ts, which the tests drive with a fake `electron`.
 */
import { runElectronShell } from './lifecycle.js';

runElectronShell();
