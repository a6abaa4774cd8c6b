import type { ReactNode } from 'react';
import { Money } from '../../components/Money.js';
import { UNKNOWN } from '../../lib/format.js';
import { forecastText } from '../../lib/forecast.js';
import { DailyBars } from './DailyBars.js';
import type { SpendReport } from './spend-store.js';

/** The organisation's money: what was deposited, what the keys' limits take, what is spent and what remains. */
export function BudgetPanel({ report }: { report: SpendReport }) {
  const org = report.organization;
  const now = new Date(report.as_of).getTime();
  // Without deposits there is nothing to run out: the budget is not in use.
  const forecast =
    org.deposited_micro === 0
      ? { headline: 'No deposits', detail: 'an operator adds credit with the admin command’s deposit', tone: 'calm' }
      : org.forecast && forecastText(org.forecast, now);
  return (
    <section aria-labelledby="budget-heading" className="budget" data-testid="budget">
      <h2 id="budget-heading">Budget</h2>
      <div className="cards">
        <Card id="deposited" label="Deposited" hint="Every deposit: the budget">
          <Money micro={org.deposited_micro} unit />
        </Card>
        <Card id="allocated" label="Given to key limits" hint="Credit limits of the active keys">
          <Money micro={org.allocated_micro} unit />
        </Card>
        <Card id="headroom" label="Headroom" hint="The most a new or raised limit may take">
          <Money micro={org.headroom_micro} unit />
        </Card>
        <Card id="spent" label="Spent" hint="Settled spend of every key, revoked ones too">
          <Money micro={org.spent_micro} unit />
        </Card>
        <Card id="remaining" label="Remaining" hint="Deposited less spent">
          <Money micro={org.remaining_micro} unit />
        </Card>
        <Card
          id="burn"
          label="Last 7 days"
          hint={org.burn ? undefined : 'Unknown while the request log cannot be read'}
        >
          {org.burn ? (
            <span className="spend-week">
              <Money micro={org.burn.window_micro} unit />
              <DailyBars daily={org.burn.daily_micro} testId="budget-days" />
            </span>
          ) : (
            UNKNOWN
          )}
        </Card>
        <Card id="forecast" label="Deposits last until" hint={forecast?.detail}>
          {forecast ? <span className={`forecast ${forecast.tone}`}>{forecast.headline}</span> : UNKNOWN}
        </Card>
      </div>
    </section>
  );
}

function Card({ id, label, hint, children }: { id: string; label: string; hint?: string; children: ReactNode }) {
  return (
    <div className="card" data-testid={`budget-${id}`}>
      <span className="muted">{label}</span>
      <span className="value" data-testid={`budget-${id}-value`}>
        {children}
      </span>
      {hint && <small className="muted">{hint}</small>}
    </div>
  );
}
