import { notFound } from '../http-errors.js';
import { sealProviderKey } from '../security/vault-cipher.js';
import type { ControlRecords } from '../stores/control/store.js';
import type { VaultKeyRow } from '../stores/control/vault.js';

/**
 * What may be shown of a provider key: "…" and its last four characters, but never
 * more than a third of a short key.
 */
export function keyHint(apiKey: string): string {
  const chars = [...apiKey];
  const shown = Math.min(4, Math.floor(chars.length / 3));
  return '…' + chars.slice(chars.length - shown).join('');
}

interface Actor {
  orgId: string;
  actorId: string | null;
  sourceIp: string;
  now: number;
}

/** Stores or rotates a provider key, sealed, and records `vault_key.set` in the same transaction. */
export function storeProviderKey(
  control: ControlRecords,
  masterKey: Buffer,
  input: Actor & { provider: string; apiKey: string },
): Promise<VaultKeyRow> {
  const sealed = sealProviderKey(masterKey, input.orgId, input.provider, input.apiKey);
  return control.write(async (tx) => {
    const row = await tx.vault.put(input.orgId, input.provider, sealed, keyHint(input.apiKey), input.now);
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'vault_key.set',
      target: input.provider,
      sourceIp: input.sourceIp,
      at: input.now,
    });
    return row;
  });
}

export function removeProviderKey(control: ControlRecords, input: Actor & { provider: string }): Promise<void> {
  return control.write(async (tx) => {
    if (!(await tx.vault.delete(input.orgId, input.provider))) {
      throw notFound('no key is stored for this provider', { field: 'provider' });
    }
    await tx.activity.record({
      orgId: input.orgId,
      actorId: input.actorId,
      action: 'vault_key.revoked',
      target: input.provider,
      sourceIp: input.sourceIp,
      at: input.now,
    });
  });
}
