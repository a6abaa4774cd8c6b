import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from './common.js';

export const PROVIDER_PATTERN = '^[a-z0-9][a-z0-9_-]{0,63}$';

export const StoreVaultKeyBody = Type.Object({
  provider: Type.String({ pattern: PROVIDER_PATTERN }),
  api_key: Type.String({ minLength: 1, maxLength: 4096 }),
});
export type StoreVaultKeyBody = Static<typeof StoreVaultKeyBody>;

export const VaultKey = Type.Object({
  provider: Type.String(),
  key_hint: Type.String({ description: '… and the last four characters of the key' }),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type VaultKey = Static<typeof VaultKey>;

export const VaultKeyList = Type.Object({ keys: Type.Array(VaultKey) });
export type VaultKeyList = Static<typeof VaultKeyList>;

export const ProviderParams = Type.Object({ provider: Type.String() });
