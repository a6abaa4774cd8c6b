export function ActivityScreen() {
  return <p className="muted">Not built yet.</p>;
}
