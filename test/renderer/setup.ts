import { cleanup } from '@testing-library/react';
import { afterEach } from 'vitest';
import { bridge } from './fake-bridge.js';

// jsdom has <dialog> but not its modal methods; these do what the browser's do to `open`.
if (!HTMLDialogElement.prototype.showModal) {
  HTMLDialogElement.prototype.showModal = function showModal(this: HTMLDialogElement) {
    this.open = true;
  };
  HTMLDialogElement.prototype.close = function close(this: HTMLDialogElement) {
    this.open = false;
  };
}

afterEach(() => {
  cleanup();
  bridge.reset();
});
