import { CHECK_ALERTS_SHORTCUT, shortcutHint } from '../../commands/shortcut.js';
import { useEffect, useState } from 'react';
import { DataTable, type Column } from '../../components/DataTable.js';
import { Time } from '../../components/Time.js';
import { useRoute } from '../../state/route.js';
import { SCREEN_TITLES } from './alert-rules.js';
import { useAlerts, type FiredAlert } from './alerts-store.js';
import { RulesEditor } from './RulesEditor.js';
import './alerts.css';
import { dataState } from '../../lib/data-state.js';

const COLUMNS: Column[] = [{ label: 'Fired' }, { label: 'Alert' }, { label: 'Explained on', hidden: true }];

/** Alert rules for this connection, how their last check went, and what they fired. */
export function AlertsScreen() {
  const view = useAlerts((s) => s.view);
  const error = useAlerts((s) => s.error);
  const busy = useAlerts((s) => s.busy);
  const load = useAlerts((s) => s.load);
  const checkNow = useAlerts((s) => s.checkNow);
  const go = useRoute((s) => s.go);

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <div className="alerts stack" data-testid="alerts-screen" data-state={dataState(view, error)}>
      <p className="muted">
        Rules are kept with this connection and checked by the console while it runs, every minute; an alert fires when
        a rule starts to hold for a key (or the organisation), and again only after it has stopped holding.
      </p>
      <NotificationPermission />
      {view && <RulesEditor rules={view.rules} />}
      <section aria-labelledby="fired-heading" className="stack">
        <h2 id="fired-heading">Fired</h2>
        <div className="toolbar">
          <span className="muted" data-testid="alert-check" aria-live="polite">
            {view?.check.problem ??
              (view?.check.checkedAt ? (
                <>
                  Last checked <Time iso={view.check.checkedAt} />
                </>
              ) : (
                'Not checked yet'
              ))}
          </span>
          <span className="spacer" />
          <button
            type="button"
            disabled={busy || !view}
            onClick={() => void checkNow()}
            {...shortcutHint('Check the alert rules now', CHECK_ALERTS_SHORTCUT)}
            data-testid="check-alerts"
          >
            Check now
          </button>
        </div>
        <DataTable
          testId="fired-alerts"
          label="Alerts fired, newest first"
          columns={COLUMNS}
          rows={view?.fired ?? null}
          rowKey={(alert) => alert.seq}
          loading="Loading the alerts…"
          error={error}
          onRetry={() => void load()}
          empty="Nothing has fired."
          row={(alert: FiredAlert) => (
            <tr key={alert.seq} data-testid="fired-alert" data-subject={alert.subject}>
              <td>
                <Time iso={alert.firedAt} />
              </td>
              <td className="alert-text">
                <strong>{alert.title}</strong>
                <small className="muted">{alert.body}</small>
              </td>
              <td>
                <button type="button" className="link" onClick={() => go(alert.screen, alert.params)}>
                  Open {SCREEN_TITLES[alert.screen]}
                </button>
              </td>
            </tr>
          )}
        />
      </section>
    </div>
  );
}

/** In the web shell, the browser asks once whether the console may raise notifications; this asks it on a click. */
function NotificationPermission() {
  const [permission, setPermission] = useState(() =>
    typeof Notification === 'undefined' ? null : Notification.permission,
  );
  if (permission === null || permission === 'granted') return null;
  if (permission === 'denied') {
    return (
      <p className="muted" data-testid="notifications-denied">
        Desktop notifications are blocked for the console in this browser; alerts show here only.
      </p>
    );
  }
  return (
    <p className="toolbar">
      <button
        type="button"
        onClick={() => void Notification.requestPermission().then(setPermission)}
        data-testid="allow-notifications"
      >
        Allow desktop notifications
      </button>
    </p>
  );
}
