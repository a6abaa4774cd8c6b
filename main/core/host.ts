import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TObject } from '@sinclair/typebox';
import type { Dispatcher } from 'undici';
import { EMBEDDED_ADDRESS } from '#server/schemas/embedded-names.js';
import { AlertStore, type StoredAlert } from './alerts/alert-store.js';
import { AlertWatcher } from './alerts/watcher.js';
import { ControlPlaneClient } from './client.js';
import {
  apiEndpoints,
  bridgeSchemas,
  type ApiEndpoint,
  type BridgeEnvelope,
  type CallArgs,
  type CallName,
  type AlertsView,
  type CallResult,
  type EmbeddedStatus,
  type ProfileView,
} from './contract.js';
import type { EndpointInput, EndpointName } from './endpoints.js';
import { ConsoleError, fieldOf } from './errors.js';
import { HttpSession } from './http-session.js';
import { PreferenceStore } from './preferences.js';
import type { Profile, ProfileStore } from './profiles.js';
import { SavedViewStore } from './saved-views/store.js';

/** How requests reach the embedded server: the address they name, carried to its socket by the dispatcher. */
export interface EmbeddedConnection {
  baseUrl: string;
  dispatcher: Dispatcher;
}

/** What the host needs of the embedded server: started on demand, restartable after a crash. */
export interface EmbeddedServerControl {
  /** Starts the server if needed; resolves with the way to reach it once it answers. */
  start(): Promise<EmbeddedConnection>;
  restart(): Promise<EmbeddedConnection>;
  status(): EmbeddedStatus;
  /** The demo admin's email and password while the demo data is in place; never sent to the renderer. */
  demoCredentials(): { email: string; password: string } | null;
}

export interface HostOptions {
  shell: 'electron' | 'web';
  version: string;
  profiles: ProfileStore;
  embedded: EmbeddedServerControl;
  /** Refresh the access cookie when it lapses within this many ms (default one minute). */
  refreshAheadMs?: number;
  /** Each account's preferences (the theme); in memory without it. */
  preferences?: PreferenceStore;
  /** Told when a profile is signed out because its session could not be refreshed. */
  onSignedOut?: (profileId: string) => void;
  /** Alert rules and what they fired, checked every `everyMs` (one minute by default); in memory without it. */
  alerts?: {
    store: AlertStore;
    everyMs?: number;
    /**
     * The shell's own notification, where the host can raise one (Electron), true when raised;
     * the web shell's page raises its own.
     */
    notify?: (profileId: string, alert: StoredAlert) => boolean;
  };
  /** Where each profile's saved views are kept (per account); in memory without it. */
  savedViews?: SavedViewStore;
}

/** Fired alerts the renderer is given: the newest, enough for its list. */
const SHOWN_ALERTS = 50;

/** The embedded server's address is the same at every start, so its jar's cookies always match it. */
const EMBEDDED_COOKIE_ORIGIN = EMBEDDED_ADDRESS;

type Handlers = { [K in CallName]: (args: CallArgs<K>) => Promise<CallResult<K>> };

const argChecks = new Map<CallName, TypeCheck<TObject>>(
  (Object.keys(bridgeSchemas) as CallName[]).map((name) => [name, TypeCompiler.Compile(bridgeSchemas[name].args)]),
);

/**
 * The console's host, shared by both shells: it owns the profiles' sessions and
 * implements every bridge call. The renderer never sees a cookie or a token.
 */
export class ConsoleHost {
  private readonly connections = new Map<
    string,
    { baseUrl: string; dispatcher: Dispatcher | undefined; client: ControlPlaneClient }
  >();
  readonly handlers: Handlers;
  readonly alerts: AlertWatcher;
  private readonly alertStore: AlertStore;
  private readonly savedViews: SavedViewStore;
  private readonly preferences: PreferenceStore;
  /** Who is signed in on each profile, learnt from the session's answers: preferences are theirs. */
  private readonly userIds = new Map<string, string>();

  constructor(private readonly options: HostOptions) {
    this.alertStore = options.alerts?.store ?? new AlertStore(null);
    this.savedViews = options.savedViews ?? new SavedViewStore(null);
    this.preferences = options.preferences ?? new PreferenceStore(null);
    this.handlers = this.createHandlers();
    this.alerts = new AlertWatcher({
      store: this.alertStore,
      profiles: () => options.profiles.list().map((profile) => profile.id),
      // Only a profile signed in on this side is read: a check never asks for a password.
      client: async (profileId) =>
        (await this.view(options.profiles.get(profileId))).signedIn ? this.client(profileId) : null,
      ...(options.alerts?.notify ? { notify: options.alerts.notify } : {}),
    });
    this.alerts.start(options.alerts?.everyMs ?? 60_000);
  }

  /** Stops the alert checks (the host is going). */
  close(): void {
    this.alerts.stop();
  }

  private alertsView(profileId: string): AlertsView {
    const { rules, fired } = this.alertStore.get(profileId);
    return { rules, fired: fired.slice(-SHOWN_ALERTS).reverse(), check: this.alerts.status(profileId) };
  }

  /** Validates a call's arguments against the contract, runs it, and wraps the outcome for the bridge. */
  async dispatch(name: string, args: unknown): Promise<BridgeEnvelope<unknown>> {
    const check = argChecks.get(name as CallName);
    if (!check) return { ok: false, error: { status: 404, message: `unknown bridge call ${name}` } };
    if (!check.Check(args)) {
      const first = check.Errors(args).First();
      const message = `invalid arguments for ${name}: ${first?.path || '(arguments)'} ${first?.message ?? ''}`.trim();
      // The failing argument's path, `/body/credit_limit_cents`, names the field the renderer shows it at.
      const field = fieldOf(first?.path.split('/').slice(1) ?? []);
      return { ok: false, error: field === undefined ? { status: 422, message } : { status: 422, message, field } };
    }
    try {
      const handler = this.handlers[name as CallName] as (args: unknown) => Promise<unknown>;
      return { ok: true, result: await handler(args) };
    } catch (error) {
      if (error instanceof ConsoleError) return { ok: false, error: error.toBody() };
      return { ok: false, error: { status: 500, message: 'the console host failed; see its log' } };
    }
  }

  private async client(profileId: string): Promise<ControlPlaneClient> {
    const profile = this.options.profiles.get(profileId);
    // The embedded server's address never changes; a new start brings a new dispatcher to its socket.
    const { baseUrl, dispatcher } =
      profile.kind === 'embedded' ? await this.options.embedded.start() : { baseUrl: profile.baseUrl ?? '' };
    const existing = this.connections.get(profileId);
    if (existing && existing.baseUrl === baseUrl && existing.dispatcher === dispatcher) return existing.client;
    const session = new HttpSession(baseUrl, this.options.profiles.jar(profileId), {
      dispatcher,
      refreshAheadMs: this.options.refreshAheadMs,
      onJarChanged: () => this.options.profiles.saveJar(profileId),
      onSignedOut: () => {
        // A lapsed session: prefs.* and views.* answer 401 until someone signs in, not as the last account.
        this.userIds.delete(profileId);
        this.options.onSignedOut?.(profileId);
      },
    });
    const client = new ControlPlaneClient(session);
    this.connections.set(profileId, { baseUrl, dispatcher, client });
    return client;
  }

  /** Signed in as far as this side knows: the jar holds a live refresh cookie for the profile's address. */
  private async view(profile: Profile): Promise<ProfileView> {
    const baseUrl = profile.baseUrl ?? EMBEDDED_COOKIE_ORIGIN;
    const cookies = await this.options.profiles.jar(profile.id).getCookies(`${baseUrl}/auth/refresh`);
    return { ...profile, signedIn: cookies.some((cookie) => cookie.key === 'svc_refresh_token') };
  }

  private createHandlers(): Handlers {
    const profiles = this.options.profiles;
    const api = Object.fromEntries(
      apiEndpoints.map((name: ApiEndpoint) => [
        `api.${name}`,
        async ({ profileId, ...input }: { profileId: string } & Record<string, unknown>) =>
          (await this.client(profileId)).call(name as EndpointName, input as EndpointInput<EndpointName>),
      ]),
    );
    const host: Pick<Handlers, Exclude<CallName, `api.${string}`>> = {
      'app.info': async () => ({ shell: this.options.shell, version: this.options.version }),
      'profiles.list': async () => ({ profiles: await Promise.all(profiles.list().map((p) => this.view(p))) }),
      'profiles.add': async (args) => this.view(profiles.add(args)),
      'profiles.remove': async ({ profileId }) => {
        // End the server-side session too, so a copy of the jar file grants nothing afterwards.
        await this.signOut(profileId);
        profiles.remove(profileId);
        this.alertStore.remove(profileId);
        this.savedViews.removeProfile(profileId);
        this.preferences.remove(profileId);
        this.connections.delete(profileId);
        return {};
      },
      'session.signIn': async ({ profileId, email, password }) =>
        this.signedIn(profileId, await (await this.client(profileId)).call('login', { body: { email, password } })),
      'session.signInDemo': async ({ profileId }) => {
        if (profiles.get(profileId).kind !== 'embedded') {
          throw new ConsoleError(400, 'only the embedded server has the demo account');
        }
        const demo = this.options.embedded.demoCredentials();
        if (!demo) throw new ConsoleError(404, 'the embedded server holds no demo data');
        return this.signedIn(profileId, await (await this.client(profileId)).call('login', { body: demo }));
      },
      'session.register': async ({ profileId, ...body }) =>
        this.signedIn(profileId, await (await this.client(profileId)).call('register', { body })),
      'session.google': async ({ profileId, ...body }) =>
        this.signedIn(profileId, await (await this.client(profileId)).call('google', { body })),
      'session.signOut': async ({ profileId }) => {
        await this.signOut(profileId);
        return {};
      },
      'session.me': async ({ profileId }) => {
        const me = await (await this.client(profileId)).call('me', {});
        this.userIds.set(profileId, me.user_id);
        return me;
      },
      'alerts.get': async ({ profileId }) => {
        profiles.get(profileId);
        return this.alertsView(profileId);
      },
      'alerts.setRules': async ({ profileId, rules }) => {
        profiles.get(profileId);
        if (new Set(rules.map((rule) => rule.id)).size !== rules.length) {
          throw new ConsoleError(400, 'two alert rules have the same id', { field: 'rules' });
        }
        this.alertStore.setRules(profileId, rules);
        await this.alerts.recheck(profileId);
        return this.alertsView(profileId);
      },
      'alerts.check': async ({ profileId }) => {
        profiles.get(profileId);
        await this.alerts.check(profileId);
        return this.alertsView(profileId);
      },
      'alerts.delivered': async ({ profileId, through }) => {
        profiles.get(profileId);
        this.alertStore.markDelivered(profileId, through);
        return {};
      },
      'prefs.get': async ({ profileId }) => this.preferences.read(profileId, await this.userId(profileId)),
      'prefs.setTheme': async ({ profileId, theme }) =>
        this.preferences.setTheme(profileId, await this.userId(profileId), theme),
      // Each account's own views: the host knows who is signed in on the profile (401 when no one).
      'views.list': async ({ profileId }) => {
        const { views, setAside } = this.savedViews.list(profileId, await this.userId(profileId));
        return { views, set_aside: setAside };
      },
      'views.save': async ({ profileId, ...view }) =>
        this.savedViews.save(profileId, await this.userId(profileId), view),
      'views.rename': async ({ profileId, viewId, name }) =>
        this.savedViews.rename(profileId, await this.userId(profileId), viewId, name),
      'views.remove': async ({ profileId, viewId }) => {
        this.savedViews.remove(profileId, await this.userId(profileId), viewId);
        return {};
      },
      'embedded.status': async () => this.options.embedded.status(),
      'embedded.restart': async () => {
        this.dropEmbeddedConnections();
        await this.options.embedded.restart();
        return this.options.embedded.status();
      },
    };
    return { ...host, ...api } as Handlers;
  }

  /** Notes who a sign-in (or registration) signed in on the profile, and passes its answer on. */
  private signedIn<T extends { user: { user_id: string } }>(profileId: string, answer: T): T {
    this.userIds.set(profileId, answer.user.user_id);
    return answer;
  }

  /** The account signed in on the profile: known from its sign-in, else asked of the server (401 when none). */
  private async userId(profileId: string): Promise<string> {
    this.options.profiles.get(profileId);
    const known = this.userIds.get(profileId);
    if (known !== undefined) return known;
    const me = await (await this.client(profileId)).call('me', {});
    this.userIds.set(profileId, me.user_id);
    return me.user_id;
  }

  /**
   * Logs out on the server when it can be reached, and empties the profile's jar whatever
   * happens: an unreachable or crashed server must not keep the session alive on this side.
   */
  private async signOut(profileId: string): Promise<void> {
    const jar = this.options.profiles.jar(profileId);
    this.userIds.delete(profileId);
    try {
      if (
        (await jar.getCookies(`${this.options.profiles.get(profileId).baseUrl ?? EMBEDDED_COOKIE_ORIGIN}/auth/refresh`))
          .length > 0
      ) {
        await (await this.client(profileId)).call('logout', {});
      }
    } catch (error) {
      if (!(error instanceof ConsoleError)) throw error;
    } finally {
      await jar.removeAllCookies();
      this.options.profiles.saveJar(profileId);
    }
  }

  private dropEmbeddedConnections(): void {
    for (const profile of this.options.profiles.list()) {
      if (profile.kind === 'embedded') this.connections.delete(profile.id);
    }
  }
}
