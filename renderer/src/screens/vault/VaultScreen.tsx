export function VaultScreen() {
  return <p className="muted">Not built yet.</p>;
}
