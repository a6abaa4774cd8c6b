import { formatDecimal } from '../../lib/format.js';
import { ProportionBar } from './ProportionBar.js';
import { timelineOf } from './request-picture.js';
import type { RequestRow } from './request-row.js';
import { Unknown } from './Unknown.js';

const ms = (value: number | null) => formatDecimal(value, ' ms');

/** Where the request's time went, drawn to scale from its arrival to its end, the figures beside. */
export function RequestTimeline({ row }: { row: RequestRow }) {
  const timeline = timelineOf(row);
  const description =
    `Timeline, ${ms(timeline.totalMs)} in all: ` +
    timeline.phases.map((phase) => `${phase.label.toLowerCase()} ${ms(phase.ms)}`).join(', ');
  return (
    <section aria-labelledby="request-timeline-title" data-testid="request-timeline">
      <h3 id="request-timeline-title">Timeline</h3>
      <ProportionBar
        label={description}
        parts={timeline.phases.map((phase) => ({ id: phase.id, value: phase.ms }))}
        testId="timeline-bar"
      />
      <div className="picture-scale" aria-hidden="true">
        <span>0 ms</span>
        <span>{ms(timeline.totalMs)}</span>
      </div>
      <dl className="requests-fields picture-legend">
        {timeline.phases.map((phase) => (
          <div key={phase.id} className="picture-legend-row" data-testid={`timeline-${phase.id}`}>
            <dt>
              <span className={`picture-swatch picture-${phase.id}`} aria-hidden="true" />
              {phase.label}
            </dt>
            <dd>
              {ms(phase.ms)}{' '}
              <small className="muted">
                ({ms(phase.startMs)} to {ms(phase.startMs + phase.ms)})
              </small>
            </dd>
          </div>
        ))}
        <div className="picture-legend-row" data-testid="timeline-ttft">
          <dt>First token after</dt>
          <dd>
            {timeline.ttftMs === null ? <Unknown why={timeline.unknownWhy ?? 'not recorded'} /> : ms(timeline.ttftMs)}
          </dd>
        </div>
        <div className="picture-legend-row" data-testid="timeline-speed">
          <dt>Generation speed</dt>
          <dd>
            {timeline.tokensPerSecond === null ? (
              <Unknown why="no tokens generated, or no time to generate them in" />
            ) : (
              <>
                {formatDecimal(timeline.tokensPerSecond, ' tokens/s')}
                {timeline.ttftMs === null && <small className="muted"> (over the whole upstream span)</small>}
              </>
            )}
          </dd>
        </div>
      </dl>
      {timeline.inconsistent && (
        <p className="muted" data-testid="timeline-inconsistent">
          The recorded times do not fit together ({timeline.inconsistent}): the picture keeps within the total.
        </p>
      )}
    </section>
  );
}
