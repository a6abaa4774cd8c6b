import { Type, type Static } from '@sinclair/typebox';

/** How the console looks: the system's choice, or one the user made. */
export const Theme = Type.Union([Type.Literal('system'), Type.Literal('light'), Type.Literal('dark')]);
export type Theme = Static<typeof Theme>;

/** What one account keeps on one connection: its theme, for now. */
export const Preferences = Type.Object({ theme: Theme });
export type Preferences = Static<typeof Preferences>;

/** An account's preferences as read: `saved` false when it never chose (the defaults are shown). */
export const StoredPreferences = Type.Object({ theme: Theme, saved: Type.Boolean() });
export type StoredPreferences = Static<typeof StoredPreferences>;
