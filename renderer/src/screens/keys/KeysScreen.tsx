export function KeysScreen() {
  return <p className="muted">Not built yet.</p>;
}
