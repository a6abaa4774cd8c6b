export function RequestLogScreen() {
  return <p className="muted">Not built yet.</p>;
}
