export function AnalyticsScreen() {
  return <p className="muted">Not built yet.</p>;
}
